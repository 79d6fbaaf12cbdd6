import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { isPortFree } from './freePort.js';

/**
 * A real Redis Cluster of three masters on free loopback ports (`redis-server --cluster-enabled
 * yes`, joined by `redis-cli --cluster create`), started by a test and stopped by it; the shared
 * Redis on 6379 is never touched. `cluster-require-full-coverage no`: with a master down, the other
 * slots keep serving (no replicas here: a lost master's slots are simply unavailable until it returns).
 */

const run = promisify(execFile);

export type RedisCluster = {
  /** redis-cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3> */
  readonly url: string;
  readonly ports: readonly number[];
  /** SIGKILLs master `i` (0–2). */
  kill(i: number): void;
  /** Starts master `i` again with its node file (same id, same slots); resolves when the cluster is ok. */
  restart(i: number): Promise<void>;
  /** Waits until every running node reports cluster_state:ok. */
  healthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
};

export async function redisServerAvailable(): Promise<boolean> {
  try {
    await run('redis-server', ['--version']);
    await run('redis-cli', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** Three ports p with p + 10000 (the cluster bus) free as well. */
async function clusterPorts(): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < 3) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (ports.includes(port)) continue;
    if ((await isPortFree(port)) && (await isPortFree(port + 10_000))) ports.push(port);
  }
  return ports;
}

export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'opscan-redis-cluster-'));
  const ports = await clusterPorts();
  const servers: Array<ChildProcess | null> = [null, null, null];

  const startNode = (i: number) => {
    const port = ports[i]!;
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        '--cluster-require-full-coverage',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--logfile',
        `redis-${port}.log`,
      ],
      { stdio: 'ignore' },
    );
    servers[i] = child;
    child.once('exit', () => {
      if (servers[i] === child) servers[i] = null;
    });
  };
  const ping = async (port: number) => {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      return await client.call('cluster', 'info').then(String);
    } catch {
      return null;
    } finally {
      client.disconnect();
    }
  };
  const waitFor = async (check: () => Promise<boolean>, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`redis cluster: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const healthy = async (timeoutMs = 20_000) => {
    await waitFor(
      async () => {
        const running = ports.filter((_, i) => servers[i]);
        const infos = await Promise.all(running.map(ping));
        return infos.every((info) => info?.includes('cluster_state:ok'));
      },
      timeoutMs,
      'cluster_state:ok',
    );
  };
  const stopAll = () => {
    for (const child of servers) child?.kill('SIGKILL');
  };
  process.once('exit', stopAll);

  try {
    ports.forEach((_, i) => startNode(i));
    await waitFor(async () => (await Promise.all(ports.map(ping))).every((info) => info !== null), 10_000, 'the nodes to listen');
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-yes']);
    await healthy();
  } catch (error) {
    stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    url: `redis-cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    ports,
    kill(i) {
      servers[i]?.kill('SIGKILL');
      servers[i] = null;
    },
    async restart(i) {
      startNode(i);
      await healthy();
    },
    healthy,
    async stop() {
      const exits = servers.filter((c): c is ChildProcess => c !== null).map((c) => new Promise((r) => c.once('exit', r)));
      stopAll();
      await Promise.all(exits);
      process.off('exit', stopAll);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
