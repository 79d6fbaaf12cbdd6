import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createDb, type Db } from '../../shared/db/client.js';
import { migrate } from '../../shared/db/migrate.js';
import { freePort } from './freePort.js';

/**
 * A private PostgreSQL primary and a real streaming replica of it (`pg_basebackup -R`), each its own
 * cluster on a free loopback port in a temporary folder, started by a test and removed by it. The
 * shared server on 5432 is left alone (and its pg_hba.conf need not allow replication). The server
 * binaries must run as the `postgres` OS user: as root they run through `runuser -u postgres`.
 */

const run = promisify(execFile);

export type ReplicatedPostgres = {
  /** postgres://postgres@127.0.0.1:<port>/<database>, on the primary. */
  primaryUrl(database?: string): string;
  /** The same database on the replica. */
  replicaUrl(database?: string): string;
  /** Waits until the replica has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Kills the replica's server at once (no shutdown checkpoint), as a crash or a lost host would. */
  killReplica(): Promise<void>;
  /** Starts the replica again; it resumes streaming from where it stopped. */
  startReplica(): Promise<void>;
  /** Stops both servers and deletes their folders. */
  stop(): Promise<void>;
};

/** The folder of initdb, pg_ctl and pg_basebackup (PG_BIN, else the newest /usr/lib/postgresql/<v>/bin); null when absent. */
export function postgresServerBinaries(): string | null {
  const candidates = process.env.PG_BIN
    ? [process.env.PG_BIN]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : [];
  return candidates.find((dir) => ['initdb', 'pg_ctl', 'pg_basebackup'].every((b) => existsSync(join(dir, b)))) ?? null;
}

/** The `postgres` OS user when running as root (the server refuses to run as root); else null: run as ourselves. */
export function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/** Extra settings: light servers for a test; `synchronous` makes every commit wait until the replica has applied it. */
export async function startReplicatedPostgres(options: { synchronous?: boolean } = {}): Promise<ReplicatedPostgres> {
  const bin = postgresServerBinaries();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) not found; set PG_BIN');
  const owner = postgresUser();
  const asPostgres = (cmd: string, args: string[]) =>
    owner ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args);

  const root = mkdtempSync(join(tmpdir(), 'opscan-pg-'));
  if (owner) chownSync(root, owner.uid, owner.gid);
  const primaryDir = join(root, 'primary');
  const replicaDir = join(root, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const common = [
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${root}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c shared_buffers=16MB',
    '-c max_connections=200',
  ];
  const primaryOptions = [...common, `-p ${primaryPort}`, '-c wal_level=replica', '-c max_wal_senders=4', '-c wal_keep_size=256MB'];
  if (options.synchronous) primaryOptions.push(`-c synchronous_standby_names='*'`, '-c synchronous_commit=remote_apply');
  const replicaOptions = [
    ...common,
    `-p ${replicaPort}`,
    '-c hot_standby=on',
    '-c hot_standby_feedback=on',
    '-c wal_receiver_status_interval=1s',
  ];

  const start = (dir: string, opts: string[]) =>
    asPostgres('pg_ctl', ['-D', dir, '-o', opts.join(' '), '-l', `${dir}.log`, '-w', '-t', '60', 'start']);
  const stopServer = (dir: string, mode: 'fast' | 'immediate') =>
    asPostgres('pg_ctl', ['-D', dir, '-m', mode, '-w', 'stop']).catch(() => {});

  // A crashed test run must not leave servers behind.
  const onExit = () => {
    for (const dir of [replicaDir, primaryDir]) {
      try {
        execFileSync(
          owner ? 'runuser' : join(bin, 'pg_ctl'),
          [...(owner ? ['-u', 'postgres', '--', join(bin, 'pg_ctl')] : []), '-D', dir, '-m', 'immediate', 'stop'],
          { stdio: 'ignore' },
        );
      } catch {
        // not running
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  try {
    await asPostgres('initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await start(primaryDir, primaryOptions);
    await asPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    await start(replicaDir, replicaOptions);
  } catch (error) {
    onExit();
    process.off('exit', onExit);
    throw error;
  }

  const url = (port: number, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const once = async <T>(port: number, sql: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url(port) });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };

  return {
    primaryUrl: (database) => url(primaryPort, database),
    replicaUrl: (database) => url(replicaPort, database),
    async caughtUp(timeoutMs = 30_000) {
      const [current] = await once<{ lsn: string }>(primaryPort, 'select pg_current_wal_lsn()::text as lsn');
      const lsn = current!.lsn;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [row] = await once<{ done: boolean }>(replicaPort, `select pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn as done`);
        if (row?.done) return;
        if (Date.now() > deadline) throw new Error(`replica did not replay up to ${lsn} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async pauseReplay() {
      await once(replicaPort, 'select pg_wal_replay_pause()');
    },
    async resumeReplay() {
      await once(replicaPort, 'select pg_wal_replay_resume()');
    },
    async killReplica() {
      await stopServer(replicaDir, 'immediate');
    },
    async startReplica() {
      await start(replicaDir, replicaOptions);
    },
    async stop() {
      await stopServer(replicaDir, 'fast');
      await stopServer(primaryDir, 'fast');
      rmSync(root, { recursive: true, force: true });
      process.off('exit', onExit);
    },
  };
}

/** Creates `database` on the cluster's primary and migrates it (the replica follows); the caller closes the Db. */
export async function createMigratedDatabase(cluster: ReplicatedPostgres, database = 'opscan'): Promise<Db> {
  const admin = await createDb({ databaseUrl: cluster.primaryUrl(), max: 1 });
  try {
    await admin.query(`create database ${database}`);
  } finally {
    await admin.close();
  }
  const db = await createDb({ databaseUrl: cluster.primaryUrl(database), max: 5 });
  await migrate(db);
  return db;
}
