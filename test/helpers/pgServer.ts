import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createDb } from '../../shared/db/client.js';
import { migrate } from '../../shared/db/migrate.js';
import { freePort } from './freePort.js';
import { postgresServerBinaries, postgresUser } from './pgReplica.js';

/**
 * A private PostgreSQL server (its own cluster on a free loopback port in a temporary folder) that
 * a test may restart and crash: the shared server on 5432 is used by others and is never touched.
 * Started the way pgReplica.ts starts its primary; removed by `stop()` or, failing that, at exit.
 */

const run = promisify(execFile);

export type PostgresServer = {
  /** postgres://postgres@127.0.0.1:<port>/<database>. */
  url(database?: string): string;
  /** `pg_ctl restart -m fast`: clients are told 57P01 and disconnected; back within a fraction of a second. */
  restartFast(): Promise<void>;
  /** `pg_ctl stop -m immediate` (a crash: no shutdown checkpoint, crash recovery at the next start). */
  crash(): Promise<void>;
  /** `pg_ctl stop -m fast`: a clean shutdown (clients told 57P01, a shutdown checkpoint). */
  shutdown(): Promise<void>;
  /**
   * SIGKILL to the postmaster alone (as the OOM killer picks it): its children notice and exit, and
   * this resolves once they are gone (any left after 30 s are SIGKILLed), so `start()` may follow.
   */
  killPostmaster(): Promise<void>;
  /** Starts it again after `crash()`, `shutdown()` or `killPostmaster()`. */
  start(): Promise<void>;
  /**
   * SIGSTOP to the server and every process of it: its connections stay open and nothing answers
   * (the kernel still accepts new connections into the listen queue). `resume()` is SIGCONT.
   */
  pause(): void;
  resume(): void;
  /** Stops it and deletes its folder. */
  stop(): Promise<void>;
};

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = postgresServerBinaries();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found; set PG_BIN');
  const owner = postgresUser();
  const pgCtl = (args: string[]) =>
    owner ? run('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args]) : run(join(bin, 'pg_ctl'), args);

  const root = mkdtempSync(join(tmpdir(), 'opscan-pg-'));
  if (owner) chownSync(root, owner.uid, owner.gid);
  const dir = join(root, 'data');
  const port = await freePort();
  const options = [
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${root}`,
    `-p ${port}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c shared_buffers=16MB',
    '-c max_connections=200',
  ].join(' ');
  const start = () => pgCtl(['-D', dir, '-o', options, '-l', `${dir}.log`, '-w', '-t', '60', 'start']);

  /** The processes a pause stopped, continued by resume(), stop() or the exit. */
  let paused: number[] = [];
  const onExit = () => {
    try {
      for (const pid of paused) process.kill(pid, 'SIGCONT');
    } catch {
      // ended meanwhile
    }
    try {
      execFileSync(
        owner ? 'runuser' : join(bin, 'pg_ctl'),
        [...(owner ? ['-u', 'postgres', '--', join(bin, 'pg_ctl')] : []), '-D', dir, '-m', 'immediate', 'stop'],
        {
          stdio: 'ignore',
        },
      );
    } catch {
      // not running
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  try {
    const initdb = [join(bin, 'initdb'), '-D', dir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'];
    await (owner ? run('runuser', ['-u', 'postgres', '--', ...initdb]) : run(initdb[0]!, initdb.slice(1)));
    await start();
  } catch (error) {
    onExit();
    process.off('exit', onExit);
    throw error;
  }

  /** The postmaster's pid, then its children's (backends, background workers): what a pause stops. */
  const serverPids = (): number[] => {
    const postmaster = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its ')'.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false; // ended meanwhile
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  const signalAll = (signal: NodeJS.Signals, pids: number[]) => {
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // ended meanwhile
      }
    }
  };
  return {
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async restartFast() {
      await pgCtl(['-D', dir, '-o', options, '-l', `${dir}.log`, '-m', 'fast', '-w', '-t', '60', 'restart']);
    },
    async crash() {
      await pgCtl(['-D', dir, '-m', 'immediate', '-w', 'stop']);
    },
    async shutdown() {
      await pgCtl(['-D', dir, '-m', 'fast', '-w', 'stop']);
    },
    async killPostmaster() {
      const pids = serverPids();
      signalAll('SIGKILL', pids.slice(0, 1));
      // A zombie (ended, not yet reaped by whoever adopted it) holds nothing: counted as gone.
      const alive = (pid: number): boolean => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 30_000;
      while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      signalAll('SIGKILL', pids.filter(alive));
    },
    start: async () => void (await start()),
    pause() {
      // The postmaster first: stopped, it forks no backend the list below would miss.
      paused = serverPids();
      signalAll('SIGSTOP', paused);
    },
    resume() {
      signalAll('SIGCONT', paused);
      paused = [];
    },
    async stop() {
      if (paused.length > 0) signalAll('SIGCONT', paused);
      await pgCtl(['-D', dir, '-m', 'fast', '-w', 'stop']).catch(() => {});
      rmSync(root, { recursive: true, force: true });
      process.off('exit', onExit);
    },
  };
}

/** Creates `database` on the server and migrates it; answers its URL. */
export async function createMigratedDatabaseOn(server: PostgresServer, database = 'opscan'): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  try {
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  const db = await createDb({ databaseUrl: server.url(database), max: 2 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  return server.url(database);
}
