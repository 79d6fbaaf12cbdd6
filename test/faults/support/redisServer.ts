import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, waitUntil } from './childProcess.js';

/**
 * A redis-server of the fault suite's own, on a free loopback port, that the suite may stop and
 * start again (the shared Redis on 6379 is never touched). No persistence: a restart starts empty,
 * as a cache node replaced by the platform does.
 */
export type RedisServer = {
  readonly url: string;
  readonly running: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
};

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let server: ChildProcess | undefined;
  const ping = async () => {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  };
  const handle: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return server !== undefined;
    },
    async start() {
      server = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
        {
          stdio: 'ignore',
        },
      );
      await waitUntil(`redis-server on port ${port}`, ping, 10_000);
    },
    async stop() {
      const running = server;
      server = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      });
    },
  };
  await handle.start();
  return handle;
}
