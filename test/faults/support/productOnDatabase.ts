import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { generate, startDevnet, type Devnet } from '../../../devnet/index.js';
import { createDb } from '../../../shared/db/client.js';
import { createTestApp, createTestKey } from '../../helpers/app.js';
import { mostCommon } from '../../webhooks/support/expectedEvents.js';
import { startReceiver, type Receiver } from '../../webhooks/support/receiver.js';
import { apiDifference } from './apiTruth.js';
import { freePort, startChild, waitUntil, type Child } from './childProcess.js';

/**
 * What the PostgreSQL fault suites (restart and crash, failover) and the reliability matrix
 * (test/reliability/) break a database under: a devnet with generated traffic, a receiver with a
 * BUNDLER webhook, and the Procfile's web, indexer and dispatcher as OS processes on `databaseUrl`
 * (a migrated database), ready and indexed up to the truth when this resolves.
 */
export type ProductOnDatabase = {
  devnet: Devnet;
  receiver: Receiver;
  key: string;
  /** The webhook's filter: the bundler of most ops. */
  bundler: string;
  webUrl: string;
  readyz: Record<ProcessName, string>;
  /** One line per process that exited (none should, but for the kills a test makes). */
  exits: string[];
  /** Kills one process (SIGKILL by default: a crash); its exit is not counted in `exits`. */
  kill(name: ProcessName, signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts a process again after a kill, with the same settings and ports (`indexer2` the first
   * time: a second indexer process, not started with the others). `env`, when given, is added to
   * its settings from this start on.
   */
  restart(name: ProcessName, env?: Record<string, string>): void;
  /** The OS process id of a running process. */
  pid(name: ProcessName): number;
  /** Resolves once the process printed `marker` (a log line's message) since it was last started. */
  printed(name: ProcessName, marker: string, timeoutMs?: number): Promise<void>;
  /** Sends a signal that does not end the process (SIGSTOP, SIGCONT). */
  signal(name: ProcessName, signal: 'SIGSTOP' | 'SIGCONT'): void;
  stop(): Promise<void>;
};

/** The Procfile's three processes, and `indexer2`: a second indexer on the same database, started on demand. */
export type ProcessName = 'web' | 'indexer' | 'dispatcher' | 'indexer2';

/** The HTTP status `url` answers within 5 s, 0 when it does not answer. */
export const httpStatus = async (url: string): Promise<number> =>
  (await fetch(url, { signal: AbortSignal.timeout(5_000) }).catch(() => null))?.status ?? 0;

export async function startProductOnDatabase(
  databaseUrl: string,
  /** env: each process's settings over the suite's, given the devnet (for its URLs). */
  opts: { ops: number; seed: number; name: string; env?: (devnet: Devnet, process: ProcessName) => Record<string, string> },
): Promise<ProductOnDatabase> {
  const devnet = await startDevnet();
  await generate(devnet, { ops: opts.ops, days: 1, seed: opts.seed, layout: { maxBundlesPerBlock: 2, maxOpsPerBundle: 5 } });
  const bundler = mostCommon(devnet.truth.userOps.map((o) => o.bundler));
  const receiver = await startReceiver();
  const admin = await createDb({ databaseUrl, max: 1 });
  let key: string;
  try {
    key = await createTestKey(admin, opts.name, 1_000_000);
    const created = await request(createTestApp(admin, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }))
      .post('/v0/createWebhook')
      .set('x-api-key', key)
      .send({ webhookUrl: `${receiver.url}/hook`, filter: 'BUNDLER', identifier: bundler, chainId: 31337, apiName: opts.name });
    expect(created.status, 'createWebhook').to.equal(200);
  } finally {
    await admin.close();
  }
  const env = {
    DATABASE_URL: databaseUrl,
    NETWORKS: 'devnet',
    RPC_URL_DEVNET: devnet.rpcUrl,
    START_BLOCK_DEVNET: '0',
    INDEXER_POLL_INTERVAL_MS: '1000',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    // The processes inherit REDIS_URL: their cache keys must not outlive this run. The seeded
    // devnet makes the same op hashes every run (at other block times), and a final answer cached
    // by an earlier run would be served as this one's.
    REDIS_KEY_PREFIX: `opscan_t_faults_${randomUUID().slice(0, 8)}:`,
  };
  const [webPort, indexerPort, dispatcherPort, indexer2Port] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const webUrl = `http://127.0.0.1:${webPort}`;
  const readyz = {
    web: `${webUrl}/readyz`,
    indexer: `http://127.0.0.1:${indexerPort}/readyz`,
    dispatcher: `http://127.0.0.1:${dispatcherPort}/readyz`,
    indexer2: `http://127.0.0.1:${indexer2Port}/readyz`,
  };
  const children = new Map<ProcessName, Child>();
  const killed = new Set<Child>();
  const exits: string[] = [];
  const programs: Record<ProcessName, readonly [string, Record<string, string>]> = {
    web: ['server/main.ts', { PORT: String(webPort) }],
    indexer: ['indexer/main.ts', { METRICS_PORT: String(indexerPort) }],
    dispatcher: ['webhooks/main.ts', { METRICS_PORT: String(dispatcherPort) }],
    indexer2: ['indexer/main.ts', { METRICS_PORT: String(indexer2Port) }],
  };
  const changed: Partial<Record<ProcessName, Record<string, string>>> = {};
  const start = (name: ProcessName, more?: Record<string, string>): void => {
    if (more) changed[name] = { ...changed[name], ...more };
    const [script, extra] = programs[name];
    const child = startChild(name, script, { env: { ...env, ...extra, ...opts.env?.(devnet, name), ...changed[name] } });
    child.process.once('exit', (code, signal) => {
      if (!killed.has(child)) exits.push(`${name} exited (${code ?? signal})\n${child.stderrTail()}`);
    });
    children.set(name, child);
  };
  for (const name of ['web', 'indexer', 'dispatcher'] as const) start(name);
  const kill = async (name: ProcessName, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const child = children.get(name)!;
    killed.add(child);
    await child.kill(signal);
  };
  const stop = async (): Promise<void> => {
    await Promise.all([...children.values()].map((c) => (killed.add(c), c.kill())));
    await receiver.close();
    await devnet.stop();
  };
  try {
    await waitUntil(
      'the three processes to be ready',
      async () =>
        (await httpStatus(readyz.web)) === 200 &&
        (await httpStatus(readyz.indexer)) === 200 &&
        (await httpStatus(readyz.dispatcher)) === 200,
      60_000,
    );
    await waitUntil('the API to equal the ground truth', async () => (await apiDifference(webUrl, key, devnet.truth)) === null, 120_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const signal = (name: ProcessName, sig: 'SIGSTOP' | 'SIGCONT'): void => void children.get(name)!.process.kill(sig);
  const pid = (name: ProcessName): number => children.get(name)!.process.pid!;
  const printed = (name: ProcessName, marker: string, timeoutMs?: number) => children.get(name)!.printed(marker, timeoutMs);
  return { devnet, receiver, key, bundler, webUrl, readyz, exits, kill, restart: start, pid, printed, signal, stop };
}
