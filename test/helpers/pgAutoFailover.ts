import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './freePort.js';
import { postgresServerBinaries, postgresUser } from './pgReplica.js';

/**
 * A pg_auto_failover formation on loopback ports, started by a test and removed by it: a monitor
 * and two Postgres nodes (`pg_autoctl`, Debian's pg-auto-failover-cli and postgresql-15-auto-failover),
 * each keeper a child process of its own group. The monitor's health checks are tightened so a
 * lost primary is failed over within seconds rather than the default ~30 s (and the promoted node
 * is made writable 3 s after, not 30). The shared server on 5432 is never touched; as root the
 * binaries run as the `postgres` OS user, like initdb in pgServer.ts.
 */

export type AutoFailoverCluster = {
  /** postgres://postgres@127.0.0.1:<p1>,127.0.0.1:<p2>/<database>?target_session_attrs=read-write */
  url(database?: string): string;
  /** The single-host URL of node `i` (0 or 1). */
  nodeUrl(i: number, database?: string): string;
  /** Which node the monitor has as primary now. */
  primary(): Promise<number>;
  /** Stops node `i` at once (keeper and Postgres, `pg_autoctl stop --immediate`): a lost host. */
  stopNode(i: number): Promise<void>;
  /** Stops everything and deletes the folder. */
  stop(): Promise<void>;
};

/** The pg_autoctl binary, or null when pg_auto_failover is not installed. */
export function pgAutoctl(): string | null {
  return ['/usr/bin/pg_autoctl', '/usr/local/bin/pg_autoctl'].find((p) => existsSync(p)) ?? null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Monitor settings (milliseconds): health checked every second, a node unreachable for 2 s is failed over. */
const MONITOR_SETTINGS: Record<string, number> = {
  'pgautofailover.health_check_period': 1000,
  'pgautofailover.health_check_timeout': 1000,
  'pgautofailover.health_check_retry_delay': 500,
  'pgautofailover.health_check_max_retries': 1,
  'pgautofailover.node_considered_unhealthy_timeout': 2000,
  'pgautofailover.primary_demote_timeout': 3000,
};

export async function startAutoFailover(options: { database?: string; timeoutMs?: number } = {}): Promise<AutoFailoverCluster> {
  const autoctl = pgAutoctl();
  const bin = postgresServerBinaries();
  if (!autoctl || !bin) throw new Error('pg_auto_failover (pg_autoctl) or the PostgreSQL server binaries are not installed');
  const database = options.database ?? 'opscan';
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  const owner = postgresUser();
  const root = mkdtempSync(join(tmpdir(), 'opscan-pgaf-'));
  for (const d of ['config', 'data', 'run']) mkdirSync(join(root, d));
  if (owner) for (const d of ['', 'config', 'data', 'run']) chownSync(join(root, d), owner.uid, owner.gid);
  const env = [
    `PATH=${bin}:/usr/bin:/bin`,
    `XDG_CONFIG_HOME=${join(root, 'config')}`,
    `XDG_DATA_HOME=${join(root, 'data')}`,
    `XDG_RUNTIME_DIR=${join(root, 'run')}`,
    `HOME=${root}`,
  ];
  const command = (args: string[]) =>
    owner ? ['runuser', '-u', 'postgres', '--', 'env', ...env, autoctl, ...args] : ['env', ...env, autoctl, ...args];
  const children: ChildProcess[] = [];
  /** A long-running pg_autoctl (create --run, run) in a process group of its own, its output in a log file. */
  const service = (name: string, args: string[]) => {
    const [cmd, ...rest] = command(args);
    const child = spawn('sh', ['-c', `exec "$@" >>${join(root, `${name}.log`)} 2>&1`, 'sh', cmd!, ...rest], {
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    children.push(child);
  };
  const runOnce = async (args: string[]) => {
    const [cmd, ...rest] = command(args);
    await promisify(execFile)(cmd!, rest, { timeout: 60_000 });
  };

  const [monitorPort, ...nodePorts] = [await freePort(), await freePort(), await freePort()];
  const nodeDirs = [join(root, 'node1'), join(root, 'node2')];
  const url = (port: number, db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;

  const killAll = () => {
    for (const dir of [...nodeDirs, join(root, 'monitor')]) {
      try {
        const [cmd, ...rest] = command(['stop', '--pgdata', dir, '--immediate']);
        execFileSync(cmd!, rest, { stdio: 'ignore', timeout: 10_000 });
      } catch {
        // not running
      }
    }
    for (const child of children) {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const dir of [...nodeDirs, join(root, 'monitor')]) {
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
  process.once('exit', killAll);

  const query = async <T>(port: number, db: string, sql: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url(port, db), connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const states = () =>
    query<{ port: number; state: string }>(
      monitorPort,
      'pg_auto_failover',
      'select nodeport as port, reportedstate as state from pgautofailover.node',
    );
  const waitFor = async (what: string, check: () => Promise<boolean>, onTick?: () => Promise<unknown>) => {
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`pg_auto_failover: ${what} did not happen in time (logs in ${root})`);
      await onTick?.().catch(() => undefined);
      await sleep(500);
    }
  };
  const nodeState = async (i: number) => (await states()).find((s) => s.port === nodePorts[i])?.state;

  try {
    const monitorDir = join(root, 'monitor');
    await runOnce([
      'create',
      'monitor',
      '--pgdata',
      monitorDir,
      '--pgport',
      String(monitorPort),
      '--hostname',
      '127.0.0.1',
      '--auth',
      'trust',
      '--no-ssl',
    ]);
    service('monitor', ['run', '--pgdata', monitorDir]);
    await waitFor('the monitor to answer', async () => (await query(monitorPort, 'pg_auto_failover', 'select 1')).length === 1);
    for (const [name, value] of Object.entries(MONITOR_SETTINGS)) {
      await query(monitorPort, 'pg_auto_failover', `alter system set ${name} = ${value}`);
    }
    await query(monitorPort, 'pg_auto_failover', 'select pg_reload_conf()');
    const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
    const createNode = (i: number) =>
      service(`node${i + 1}`, [
        'create',
        'postgres',
        '--pgdata',
        nodeDirs[i]!,
        '--pgport',
        String(nodePorts[i]),
        '--pghost',
        '127.0.0.1',
        '--hostname',
        '127.0.0.1',
        '--listen',
        '127.0.0.1',
        '--username',
        'postgres',
        '--dbname',
        database,
        '--name',
        `node${i + 1}`,
        '--monitor',
        monitorUrl,
        '--auth',
        'trust',
        '--no-ssl',
        '--run',
      ]);
    createNode(0);
    await waitFor('node1 to run alone', async () => ['single', 'wait_primary', 'primary'].includes((await nodeState(0)) ?? ''));
    createNode(1);
    // pg_basebackup waits for a spread checkpoint (a minute or more): a CHECKPOINT on the primary ends it now.
    await waitFor(
      'node2 to become a secondary',
      async () => (await nodeState(1)) === 'secondary' && (await nodeState(0)) === 'primary',
      () => query(nodePorts[0], 'postgres', 'checkpoint'),
    );
  } catch (error) {
    killAll();
    process.off('exit', killAll);
    throw error;
  }

  return {
    url: (db = database) => `postgres://postgres@${nodePorts.map((p) => `127.0.0.1:${p}`).join(',')}/${db}?target_session_attrs=read-write`,
    nodeUrl: (i, db = database) => url(nodePorts[i]!, db),
    async primary() {
      const s = await states();
      const i = nodePorts.findIndex((p) => ['primary', 'wait_primary', 'single'].includes(s.find((n) => n.port === p)?.state ?? ''));
      if (i < 0) throw new Error(`no primary: ${JSON.stringify(s)}`);
      return i;
    },
    async stopNode(i) {
      await runOnce(['stop', '--pgdata', nodeDirs[i]!, '--immediate']);
    },
    async stop() {
      killAll();
      process.off('exit', killAll);
    },
  };
}
