/**
 * Freshness benchmark: how long after a block is mined its ops are answered by the API, pushed to a
 * webhook and passed by the GraphQL `_meta` head, with opscan running as shipped: the Procfile's web,
 * indexer and dispatcher (this tree compiled, bench/procfile.ts) as three processes on a scratch
 * PostgreSQL database, default settings, the cache on REDIS_URL when set (under a key prefix of this
 * run's own).
 *
 * The devnet mines one block of ops (devnet/continuous.ts's traffic, `opsPerBlock` each) on a fixed
 * schedule, one cadence after the other: every 2 s (like L1) and every 250 ms (a fast L2). Each op is
 * timed from when the bench saw its block mined — when `evm_mine` returned (anvil's block timestamps
 * are whole seconds, too coarse) — to:
 *  - api: the first answer of `GET /v0/getUserOp` (x-api-key) holding it, asked every `pollEveryMs`
 *    per pending op;
 *  - webhook: its `user_operation` event arriving at a receiver on 127.0.0.1 (one BUNDLER webhook per
 *    devnet bundler, created through the API, so every op is sent once);
 *  - graphqlMeta: `{ _meta { block { number } } }`, asked every `pollEveryMs`, answering its block or later.
 * Both ways of following the head are measured, the processes restarted between them on the same
 * database: polling (the shipped default) and WebSocket (RPC_WS_URL_DEVNET=ws://… of the devnet's
 * anvil; the poll interval stays at its default). An op not seen within `timeoutMs` counts as missed.
 *
 * Baseline of the same run, per mode: one request at a time for a second, getUserOp answered from the
 * cache, and a bare `eth_blockNumber` to anvil (what a round trip costs on this machine now).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { mineTrafficBlock, startDevnet, type Devnet } from '../devnet/index.js';
import { Random } from '../devnet/random.js';
import { generateApiKey } from '../shared/apiKeys.js';
import { createDb } from '../shared/db/client.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import { freePort, startChild, waitUntil, type Child } from '../test/faults/support/childProcess.js';
import { deleteRedisPrefix } from '../test/helpers/redis.js';
import { measureLoad, quantile } from './apiLoad.js';
import { freshStore } from './indexer.js';
import { buildProcfile, type ProcfileBuild } from './procfile.js';
import { startSink } from './webhooks.js';

export type FreshnessBenchOptions = {
  databaseUrl?: string;
  /** Ops measured per cadence and mode (whole blocks: a few more when the last block overshoots). */
  opsPerCadence: number;
  opsPerBlock: number;
  /** Time between blocks, one run per cadence. */
  cadencesMs: number[];
  /** How often each pending op's getUserOp, and the GraphQL head, are asked. */
  pollEveryMs: number;
  /** An op not seen this long after its block was mined is missed. */
  timeoutMs: number;
};

export const DEFAULT_FRESHNESS_BENCH: Omit<FreshnessBenchOptions, 'databaseUrl'> = {
  opsPerCadence: 60,
  opsPerBlock: 2,
  cadencesMs: [2000, 250],
  pollEveryMs: 20,
  timeoutMs: 30_000,
};

const MEASURES = ['api', 'webhook', 'graphqlMeta'] as const;
type Measure = (typeof MEASURES)[number];
const MEASURE_LABELS: Record<Measure, string> = { api: 'mined→getUserOp', webhook: 'mined→webhook', graphqlMeta: 'mined→GraphQL _meta' };

type Mode = 'polling' | 'websocket';
/** What each mode adds to the processes' environment. */
const MODES: Record<Mode, (devnet: Devnet) => Record<string, string>> = {
  polling: () => ({}),
  websocket: (devnet) => ({ RPC_WS_URL_DEVNET: `ws://127.0.0.1:${devnet.port}` }),
};

export type Latencies = { ops: number; p50Ms: number; p99Ms: number; maxMs: number; missed: number };
export type CadenceResult = {
  blocks: number;
  meanBlockIntervalMs: number;
  /** The bench's own requests to the web process (getUserOp polls and GraphQL heads) per second. */
  pollRequestsPerSecond: number;
} & Record<Measure, Latencies>;
export type ModeResult = {
  baseline: { getUserOpCached: { p50Ms: number; p99Ms: number }; anvilBlockNumber: { p50Ms: number; p99Ms: number } };
  /** By cadence, e.g. "2000ms". */
  cadences: Record<string, CadenceResult>;
};

const GRAPHQL_META = JSON.stringify({ query: '{ _meta { block { number } } }' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (ms: number) => Math.round(ms * 10) / 10;

/** The three processes of the Procfile on `env`, ready. */
type Product = { webUrl: string; exits: string[]; stop(): Promise<void> };

async function startProduct(procfile: ProcfileBuild, env: Record<string, string | undefined>): Promise<Product> {
  const [webPort, indexerPort, dispatcherPort] = [await freePort(), await freePort(), await freePort()];
  const webUrl = `http://127.0.0.1:${webPort}`;
  const children: Child[] = [];
  const exits: string[] = [];
  for (const [name, extra] of [
    ['web', { PORT: String(webPort) }],
    ['indexer', { METRICS_PORT: String(indexerPort) }],
    ['dispatcher', { METRICS_PORT: String(dispatcherPort) }],
  ] as const) {
    const child = startChild(name, procfile.args(name), { env: { ...env, ...extra } });
    child.process.once('exit', (code, signal) => exits.push(`${name} exited (${code ?? signal})\n${child.stderrTail()}`));
    children.push(child);
  }
  const stop = async () => {
    // A graceful stop (SIGTERM), then a kill for whatever is still running after 10 s.
    await Promise.all(children.map((c) => Promise.race([c.kill('SIGTERM'), sleep(10_000)]).then(() => c.kill('SIGKILL'))));
  };
  const ready = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => null))?.status === 200;
  try {
    await waitUntil(
      'the three processes to be ready',
      async () => {
        if (exits.length > 0) throw new Error(exits.join('\n'));
        return (
          (await ready(`${webUrl}/readyz`)) &&
          (await ready(`http://127.0.0.1:${indexerPort}/readyz`)) &&
          (await ready(`http://127.0.0.1:${dispatcherPort}/readyz`))
        );
      },
      60_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { webUrl, exits, stop };
}

/** Times ops against one running product; `track` resolves once all three measures saw the op or gave up. */
function tracker(opts: { web: Pool; key: string; webhookArrivals: Map<string, number>; pollEveryMs: number; timeoutMs: number }) {
  const headers = { 'x-api-key': opts.key };
  let requests = 0;
  const get = async (path: string) => {
    requests++;
    const res = await opts.web.request({ path, method: 'GET', headers });
    const body = (await res.body.json()) as { userOps?: unknown[] };
    if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${JSON.stringify(body)}`);
    return body;
  };
  // The GraphQL head, asked by one loop for every pending block: when each block number was first passed.
  const headPassedAt = new Map<number, number>();
  let head = -1;
  let watching = true;
  let headError: Error | null = null;
  const watchHead = (async () => {
    while (watching && headError === null) {
      requests++;
      const res = await opts.web.request({
        path: '/subgraphs/name/devnet',
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: GRAPHQL_META,
      });
      const at = Date.now();
      const body = (await res.body.json()) as { data?: { _meta?: { block?: { number?: number } } } };
      const number = body.data?._meta?.block?.number;
      if (typeof number !== 'number') throw new Error(`GraphQL _meta: ${res.statusCode} ${JSON.stringify(body)}`);
      for (let b = head + 1; b <= number; b++) headPassedAt.set(b, at);
      head = Math.max(head, number);
      await sleep(opts.pollEveryMs);
    }
  })().catch((err: unknown) => {
    headError = err instanceof Error ? err : new Error(String(err));
  });

  /** ms from minedAt until seenAt() returns a time, or null when it gives none within the timeout. */
  const waitFor = async (minedAt: number, seenAt: () => Promise<number | undefined> | number | undefined, everyMs: number) => {
    while (Date.now() < minedAt + opts.timeoutMs) {
      const at = await seenAt();
      if (at !== undefined) return at - minedAt;
      await sleep(everyMs);
    }
    return null;
  };

  return {
    /** getUserOp and GraphQL requests sent so far (the load the measurement itself adds). */
    requests: () => requests,
    async track(op: { hash: string; block: number; minedAt: number }): Promise<Record<Measure, number | null>> {
      const [api, webhook, graphqlMeta] = await Promise.all([
        waitFor(
          op.minedAt,
          async () => ((await get(`/v0/getUserOp?hash=${op.hash}&network=devnet`)).userOps?.length ? Date.now() : undefined),
          opts.pollEveryMs,
        ),
        // The receiver notes each arrival's time itself: this only looks for it.
        waitFor(op.minedAt, () => opts.webhookArrivals.get(op.hash), 50),
        waitFor(op.minedAt, () => headPassedAt.get(op.block), 50),
      ]);
      return { api, webhook, graphqlMeta };
    },
    async stop() {
      watching = false;
      await watchHead;
      if (headError) throw headError;
    },
  };
}

type Tracker = ReturnType<typeof tracker>;

/** Mines one traffic block and times its ops (the returned promise settles when all are seen or missed). */
async function mineAndTrack(devnet: Devnet, rng: Random, opsPerBlock: number, t: Tracker) {
  const before = devnet.truth.userOps.length;
  const block = await mineTrafficBlock(devnet, rng, opsPerBlock);
  if (!block) return { minedAt: null, timings: Promise.resolve([]) };
  const ops = devnet.truth.userOps.slice(before).filter((op) => op.blockNumber === block.number);
  return {
    minedAt: block.minedAtMs,
    timings: Promise.all(ops.map((op) => t.track({ hash: op.userOpHash, block: block.number, minedAt: block.minedAtMs }))),
  };
}

function latencies(values: Array<number | null>): Latencies {
  const seen = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  return {
    ops: seen.length,
    p50Ms: round(quantile(seen, 0.5)),
    p99Ms: round(quantile(seen, 0.99)),
    maxMs: round(seen.at(-1) ?? NaN),
    missed: values.length - seen.length,
  };
}

/**
 * A block about every `intervalMs` until `opsPerCadence` ops were mined, on a fixed schedule (a late
 * block does not push the next ones back). The step is `intervalMs` plus 1/n of it (n: the blocks
 * expected), so that over the run the blocks' phase sweeps one whole interval: a poll timer of the
 * same period (the shipped poll runs every 2 s) would otherwise meet every block at one point of its
 * cycle, and a run would measure that single point, early or late by chance.
 */
async function measureCadence(
  { devnet, rng, t }: { devnet: Devnet; rng: Random; t: Tracker },
  o: FreshnessBenchOptions,
  intervalMs: number,
): Promise<CadenceResult> {
  const timings: Array<Promise<Array<Record<Measure, number | null>>>> = [];
  const minedAt: number[] = [];
  const stepMs = intervalMs + intervalMs / Math.ceil(o.opsPerCadence / o.opsPerBlock);
  const start = Date.now();
  const requestsBefore = t.requests();
  for (let k = 0, ops = 0; ops < o.opsPerCadence; k++) {
    await sleep(start + k * stepMs - Date.now());
    const before = devnet.truth.userOps.length;
    const mined = await mineAndTrack(devnet, rng, o.opsPerBlock, t);
    if (mined.minedAt === null) continue;
    minedAt.push(mined.minedAt);
    timings.push(mined.timings);
    ops += devnet.truth.userOps.length - before;
  }
  const all = (await Promise.all(timings)).flat();
  return {
    blocks: minedAt.length,
    meanBlockIntervalMs: round((minedAt.at(-1)! - minedAt[0]!) / Math.max(1, minedAt.length - 1)),
    pollRequestsPerSecond: Math.round((t.requests() - requestsBefore) / ((Date.now() - start) / 1000)),
    ...(Object.fromEntries(MEASURES.map((m) => [m, latencies(all.map((x) => x[m]))])) as Record<Measure, Latencies>),
  };
}

export async function runFreshnessBench(options: Partial<FreshnessBenchOptions> = {}): Promise<Record<string, unknown>> {
  const o: FreshnessBenchOptions = { ...DEFAULT_FRESHNESS_BENCH, ...options };
  if (!o.databaseUrl) {
    throw new Error('the freshness bench runs the Procfile’s three processes on one store: it needs PostgreSQL (BENCH_DATABASE_URL)');
  }
  const procfile = buildProcfile();
  const devnet = await startDevnet();
  const store = await freshStore(o.databaseUrl, `opscan_bench_freshness_${Date.now()}`);
  const sink = await startSink((body) => {
    try {
      const event = JSON.parse(body) as { type?: string; data?: { userOp?: { userOpHash?: string } } };
      return event.type === 'user_operation' ? (event.data?.userOp?.userOpHash ?? null) : null;
    } catch {
      return null;
    }
  });
  const rng = new Random(21);
  const modes: Partial<Record<Mode, ModeResult>> = {};
  try {
    const { key, prefix, hash } = generateApiKey();
    const admin = await createDb({ databaseUrl: store.env.DATABASE_URL, max: 1 });
    await apiKeys.insert(admin, { prefix, hash, name: 'bench freshness', rateLimitPerSecond: 1_000_000 }).finally(() => admin.close());

    for (const mode of Object.keys(MODES) as Mode[]) {
      const redisPrefix = `opscan_bench_freshness_${randomUUID().slice(0, 8)}:`;
      const env = {
        ...process.env,
        ...store.env,
        NETWORKS: 'devnet',
        RPC_URL_DEVNET: devnet.rpcUrl,
        START_BLOCK_DEVNET: '0',
        // The receiver listens on loopback, which the shipped default refuses.
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
        // Answers cached by another run or the other mode must not be served as this one's.
        REDIS_KEY_PREFIX: redisPrefix,
        // Shipped defaults for everything else, whatever this shell has set.
        RPC_WS_URL_DEVNET: undefined,
        INDEXER_POLL_INTERVAL_MS: undefined,
        METRICS_PORT: undefined,
        PORT: undefined,
        ...MODES[mode](devnet),
      };
      const product = await startProduct(procfile, env);
      const web = new Pool(product.webUrl, { connections: 64 });
      try {
        if (mode === 'polling') {
          for (const bundler of devnet.bundlers) {
            const res = await web.request({
              path: '/v0/createWebhook',
              method: 'POST',
              headers: { 'x-api-key': key, 'content-type': 'application/json' },
              body: JSON.stringify({
                webhookUrl: sink.url,
                filter: 'BUNDLER',
                identifier: bundler.address,
                chainId: devnet.chainId,
                apiName: 'bench',
              }),
            });
            if (res.statusCode !== 200) throw new Error(`createWebhook: ${res.statusCode} ${await res.body.text()}`);
            await res.body.dump();
          }
        }
        const t = tracker({ web, key, webhookArrivals: sink.firstSeen, pollEveryMs: o.pollEveryMs, timeoutMs: o.timeoutMs });
        try {
          // Warm-up (not measured): the indexer at the head, every process through its first blocks.
          for (let i = 0; i < 3; i++) {
            const warm = await (await mineAndTrack(devnet, rng, o.opsPerBlock, t)).timings;
            if (warm.some((x) => MEASURES.some((m) => x[m] === null)))
              throw new Error(`${mode}: a warm-up op was not seen in ${o.timeoutMs} ms`);
          }
          const cachedOp = devnet.truth.userOps.at(-1)!.userOpHash;
          const oneAtATime = { connections: 1, warmupMs: 200, durationMs: 1000 };
          const getUserOp = await measureLoad({
            ...oneAtATime,
            origin: product.webUrl,
            nextPath: () => `/v0/getUserOp?hash=${cachedOp}&network=devnet`,
            headers: { 'x-api-key': key },
          });
          const blockNumber = await measureLoad({
            ...oneAtATime,
            origin: devnet.rpcUrl,
            nextPath: () => '/',
            nextBody: () => '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
          });
          const result: ModeResult = {
            baseline: {
              getUserOpCached: { p50Ms: getUserOp.p50Ms, p99Ms: getUserOp.p99Ms },
              anvilBlockNumber: { p50Ms: blockNumber.p50Ms, p99Ms: blockNumber.p99Ms },
            },
            cadences: {},
          };
          for (const intervalMs of o.cadencesMs)
            result.cadences[`${intervalMs}ms`] = await measureCadence({ devnet, rng, t }, o, intervalMs);
          modes[mode] = result;
        } finally {
          await t.stop();
        }
        if (product.exits.length > 0) throw new Error(`a process exited during the ${mode} run:\n${product.exits.join('\n')}`);
      } finally {
        await web.close();
        await product.stop();
        if (process.env.REDIS_URL) await deleteRedisPrefix(process.env.REDIS_URL, redisPrefix);
      }
    }
  } finally {
    sink.server.closeAllConnections();
    sink.server.close();
    await store.drop();
    await devnet.stop();
    procfile.cleanup();
  }

  const summary: Record<string, number> = {};
  for (const [mode, result] of Object.entries(modes)) {
    for (const [cadence, r] of Object.entries(result.cadences)) {
      for (const m of MEASURES) {
        for (const stat of ['p50Ms', 'p99Ms', 'maxMs'] as const) {
          summary[`${mode}, block every ${cadence}: ${MEASURE_LABELS[m]} ${stat.replace('Ms', '')} ms`] = r[m][stat];
        }
        if (r[m].missed > 0) summary[`${mode}, block every ${cadence}: ${MEASURE_LABELS[m]} missed`] = r[m].missed;
      }
    }
    summary[`${mode}: baseline getUserOp (cached) p50 ms`] = result.baseline.getUserOpCached.p50Ms;
    summary[`${mode}: baseline anvil eth_blockNumber p50 ms`] = result.baseline.anvilBlockNumber.p50Ms;
  }
  return { summary, store: 'PostgreSQL', ...o, databaseUrl: undefined, modes };
}
