/**
 * API benchmark: loads synthetic user ops through the indexer's persistence (bench/apiData.ts) into
 * a scratch PostgreSQL database, then drives the API (bench/apiServer.ts, a separate process) from
 * this process over loopback, for a bounded time per scenario: req/s, p50 and p99 of getUserOp (cache
 * hit and miss), getLatestUserOps, getAddressActivity, getTopPaymasters and getDailyMetrics, cached
 * and uncached, and GraphQL queries (the spec's sample; the subgraph client's address activity, of an
 * account and of a busy contract), each beside a bare Express route sending a body of the same size
 * at the same connections (alternating slices), at two sizes (100k then 1M ops by default). Every
 * figure is the median of three measurements, taken after VACUUM ANALYZE and a warm-up.
 * Needs PostgreSQL (BENCH_DATABASE_URL or DATABASE_URL); uses Redis for the cache when REDIS_URL is set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { generateApiKey } from '../shared/apiKeys.js';
import { createDb, type Db } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import { loadUserOps, tokenOf, type BenchSample } from './apiData.js';
import { sampleLoad, summarize, type LoadResult, type LoadSamples } from './apiLoad.js';

export type ApiBenchOptions = {
  databaseUrl?: string;
  redisUrl?: string;
  /** Ops loaded before each round of measurements (ascending). */
  sizes: number[];
  connections: number;
  durationMs: number;
  /** Only the scenarios whose name includes this (BENCH_API_ONLY, e.g. `RPC`); the bare routes are always measured. */
  only?: string;
};

export const DEFAULT_API_BENCH: Omit<ApiBenchOptions, 'databaseUrl' | 'redisUrl'> = {
  sizes: [100_000, 1_000_000],
  // A closed loop that keeps a 2-core server saturated: req/s is its capacity, and its p99 includes queueing
  // (uncached scenarios are also measured one request at a time: see withOneConnection).
  connections: 8,
  // Per repetition; each scenario is measured REPETITIONS times and the median reported.
  durationMs: 2000,
};

/** Each figure is the median of this many measurements, so one noisy moment does not decide it. */
const REPETITIONS = 3;

/** The spec's sample subgraph query, and the published subgraph client's address-activity query. */
const GRAPHQL_USER_OP =
  'query GetUserOpHash($userOpHash: Bytes) { userOps(where: {userOpHash: $userOpHash}) { verificationGasLimit userOpHash transactionHash } }';
const GRAPHQL_ADDRESS_ACTIVITY = `query AddressActivityQuery($address: Bytes, $first: Int, $skip: Int) {
  accounts(where: {address: $address}) { id address blockNumber blockTime factory paymaster transactionHash userOpHash userOpsCount }
  userOps(first: $first, skip: $skip, orderBy: blockTime, orderDirection: desc, where: {or: [{sender: $address}, {target: $address}]}) {
    id sender target actualGasCost transactionHash actualGasUsed success revertReason blockTime blockNumber paymaster network userOpHash input nonce beneficiary entryPoint
  }
}`;

type Scenario = {
  name: string;
  server: 'cached' | 'uncached';
  nextPath: () => string;
  nextBody?: () => string;
  /** Default: the bench's `connections`. */
  connections?: number;
};

/**
 * Uncached scenarios are measured twice: at `connections` (8 on 2 cores: the server is saturated and
 * the p99 is mostly time spent queueing behind other requests, i.e. throughput) and one request at
 * a time (the latency a caller sees when the server is not saturated).
 */
const withOneConnection = (all: Scenario[]): Scenario[] => [
  ...all,
  ...all
    .filter((s) => s.name.endsWith('(uncached)'))
    .map((s) => ({ ...s, name: s.name.replace('(uncached)', '(uncached, 1 connection)'), connections: 1 })),
];

const BARE = 'bare express route';
/** The bare route's result measured beside a scenario: the same body size, the same connections. */
const bareBeside = (scenario: string) => `${BARE}, same body as ${scenario}`;
const SLICE_MS = 1000;
const isCached = (name: string) => name.includes('(cached)') || name.includes('(cache hit)');

function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  return client.connect().then(() => fn(client).finally(() => client.end()));
}

async function startServer(
  env: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; ports: { cached: number; uncached: number; cachedUnmetered: number } }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./apiServer.ts', import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench API server exited with ${code}`)));
  });
  return { child, ports: JSON.parse(firstLine) as { cached: number; uncached: number; cachedUnmetered: number } };
}

function scenarios(sample: BenchSample): Scenario[] {
  const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!;
  let unseen = 0;
  const hot = { hash: sample.userOpHashes[0]!, sender: sample.senders[0]! };
  return [
    { name: BARE, server: 'cached', nextPath: () => '/bare' },
    { name: 'getUserOp (cache hit)', server: 'cached', nextPath: () => `/v0/getUserOp?hash=${hot.hash}` },
    // Each hash once: a true miss, then written to the cache.
    {
      name: 'getUserOp (cache miss)',
      server: 'cached',
      nextPath: () => `/v0/getUserOp?hash=${sample.userOpHashes[1 + (unseen++ % (sample.userOpHashes.length - 1))]}&network=devnet`,
    },
    { name: 'getLatestUserOps (cached)', server: 'cached', nextPath: () => '/v0/getLatestUserOps?network=devnet&first=10&skip=0' },
    {
      name: 'getAddressActivity (cached)',
      server: 'cached',
      nextPath: () => `/v0/getAddressActivity?address=${hot.sender}&network=devnet&first=10&skip=0`,
    },
    { name: 'getTopPaymasters (cached)', server: 'cached', nextPath: () => '/v0/getTopPaymasters?network=devnet&first=10&skip=0' },
    { name: 'getDailyMetrics (cached)', server: 'cached', nextPath: () => '/v0/getDailyMetrics?network=devnet&noOfDays=7' },
    { name: 'getUserOp (uncached)', server: 'uncached', nextPath: () => `/v0/getUserOp?hash=${pick(sample.userOpHashes)}` },
    {
      name: 'getLatestUserOps (uncached)',
      server: 'uncached',
      nextPath: () => `/v0/getLatestUserOps?network=devnet&first=10&skip=${10 * Math.floor(Math.random() * 50)}`,
    },
    {
      name: 'getAddressActivity (uncached)',
      server: 'uncached',
      nextPath: () => `/v0/getAddressActivity?address=${pick(sample.senders)}&network=devnet&first=10&skip=0`,
    },
    {
      name: 'getTopPaymasters (uncached)',
      server: 'uncached',
      nextPath: () => `/v0/getTopPaymasters?network=devnet&first=10&skip=${Math.floor(Math.random() * 90)}`,
    },
    {
      name: 'getDailyMetrics (uncached)',
      server: 'uncached',
      nextPath: () => `/v0/getDailyMetrics?network=devnet&noOfDays=${pick([1, 2, 3, 4, 5, 6, 7])}`,
    },
    {
      name: 'GraphQL GetUserOpHash (uncached)',
      server: 'uncached',
      nextPath: () => '/subgraphs/name/devnet',
      nextBody: () => JSON.stringify({ query: GRAPHQL_USER_OP, variables: { userOpHash: pick(sample.userOpHashes) } }),
    },
    {
      name: 'GraphQL address activity (uncached)',
      server: 'uncached',
      nextPath: () => '/subgraphs/name/devnet',
      nextBody: () => JSON.stringify({ query: GRAPHQL_ADDRESS_ACTIVITY, variables: { address: pick(sample.senders), first: 10, skip: 0 } }),
    },
    // The ERC-4337 RPC (server/rpc) as wallets call it: one op a request, and a batch of 100.
    ...(['eth_getUserOperationReceipt', 'eth_getUserOperationByHash'] as const).flatMap((method): Scenario[] => [
      {
        name: `RPC ${method} (uncached)`,
        server: 'uncached',
        nextPath: () => '/rpc/devnet',
        nextBody: () => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [pick(sample.userOpHashes)] }),
      },
      {
        name: `RPC ${method}, batch of 100 (uncached)`,
        server: 'uncached',
        nextPath: () => '/rpc/devnet',
        nextBody: () =>
          JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method, params: [pick(sample.userOpHashes)] }))),
      },
    ]),
    // The same query for the contracts most ops call (each the first call's target of 6-18 % of them).
    {
      name: 'GraphQL address activity, busy contract (uncached)',
      server: 'uncached',
      nextPath: () => '/subgraphs/name/devnet',
      nextBody: () =>
        JSON.stringify({ query: GRAPHQL_ADDRESS_ACTIVITY, variables: { address: tokenOf(pick([0, 1, 2, 3])), first: 10, skip: 0 } }),
    },
  ];
}

async function measureRound(db: Db, databaseUrl: string, options: ApiBenchOptions, sample: BenchSample) {
  const { key, prefix, hash } = generateApiKey();
  await apiKeys.insert(db, { prefix, hash, name: 'bench', rateLimitPerSecond: 1_000_000_000 });
  const { child, ports } = await startServer({
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: `opscan_bench_${Date.now()}:`,
  });
  try {
    const results: Record<string, LoadResult> = {};
    const origin = (server: Scenario['server']) => `http://127.0.0.1:${ports[server]}`;
    const slice = (server: Scenario['server'], nextPath: () => string, nextBody?: () => string, connections = options.connections) =>
      sampleLoad({
        origin: origin(server),
        nextPath,
        nextBody,
        headers: { 'x-api-key': key },
        connections,
        warmupMs: 200,
        durationMs: SLICE_MS,
      });
    const all = withOneConnection(scenarios(sample)).filter((s) => !options.only || s.name === BARE || s.name.includes(options.only));
    // A GraphQL or JSON-RPC refusal is a 200 with `errors` or `error`: check each answers data before timing it.
    for (const s of all.filter((x) => x.nextBody)) {
      const res = await fetch(`${origin(s.server)}${s.nextPath()}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: s.nextBody!(),
      });
      const answer = (await res.json()) as Record<string, unknown> | Array<Record<string, unknown>>;
      const answered = (a: Record<string, unknown>) => !a.errors && !a.error && (a.data ?? a.result);
      if (res.status !== 200 || !(Array.isArray(answer) ? answer.every(answered) : answered(answer)))
        throw new Error(`${s.name} does not answer data: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    // Warm-up: every scenario once, unrecorded (caches, buffers and the JIT as in steady state).
    for (const s of all)
      await sampleLoad({
        origin: origin(s.server),
        nextPath: s.nextPath,
        nextBody: s.nextBody,
        headers: { 'x-api-key': key },
        connections: s.connections ?? options.connections,
        warmupMs: 0,
        durationMs: 300,
      });
    for (const s of all) {
      // The machine is shared: each scenario and the bare route sending a body of the same (mean)
      // size, at the same number of connections, alternate in short slices, so a load change
      // elsewhere hits both alike. The bare route is the floor of this machine for that answer.
      const own: LoadResult[] = [];
      const bare: LoadResult[] = [];
      for (let repetition = 0; repetition < REPETITIONS; repetition++) {
        const ownSlices: LoadSamples[] = [];
        const bareSlices: LoadSamples[] = [];
        for (let i = 0; i < Math.max(1, Math.round(options.durationMs / SLICE_MS)); i++) {
          ownSlices.push(await slice(s.server, s.nextPath, s.nextBody, s.connections));
          if (s.name === BARE) continue;
          const { meanBytes } = summarize(ownSlices.slice(-1));
          bareSlices.push(await slice('cached', () => `/bare/${meanBytes}`, undefined, s.connections));
        }
        own.push(summarize(ownSlices));
        if (bareSlices.length > 0) bare.push(summarize(bareSlices));
      }
      results[s.name] = median(own);
      if (bare.length > 0) results[bareBeside(s.name)] = median(bare);
      for (const name of [s.name, bareBeside(s.name)]) if (results[name]) console.error(`  ${name}: ${JSON.stringify(results[name])}`);
    }
    Object.assign(results, await measureMeteringCost(ports, key, sample, options));
    return results;
  } finally {
    child.kill('SIGTERM');
  }
}

const METERING_ON = 'usage metering on, getUserOp cache hit';
const METERING_OFF = 'USAGE_METERING=off, getUserOp cache hit';

/**
 * What usage metering costs a cached answer (the cheapest call, where it weighs most): the same
 * server's cached app with metering on (the default) and off, in alternating slices.
 */
async function measureMeteringCost(
  ports: { cached: number; cachedUnmetered: number },
  key: string,
  sample: BenchSample,
  options: ApiBenchOptions,
) {
  const path = () => `/v0/getUserOp?hash=${sample.userOpHashes[0]!}`;
  const slice = (port: number) =>
    sampleLoad({
      origin: `http://127.0.0.1:${port}`,
      nextPath: path,
      headers: { 'x-api-key': key },
      connections: options.connections,
      warmupMs: 200,
      durationMs: SLICE_MS,
    });
  const on: LoadResult[] = [];
  const off: LoadResult[] = [];
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    const onSlices: LoadSamples[] = [];
    const offSlices: LoadSamples[] = [];
    for (let i = 0; i < Math.max(1, Math.round(options.durationMs / SLICE_MS)); i++) {
      onSlices.push(await slice(ports.cached));
      offSlices.push(await slice(ports.cachedUnmetered));
    }
    on.push(summarize(onSlices));
    off.push(summarize(offSlices));
  }
  const results = { [METERING_ON]: median(on), [METERING_OFF]: median(off) };
  for (const [name, r] of Object.entries(results)) console.error(`  ${name}: ${JSON.stringify(r)}`);
  return results;
}

/** The median of each figure over repeated measurements of one scenario. */
function median(runs: LoadResult[]): LoadResult {
  const mid = <K extends keyof LoadResult>(k: K) => [...runs].sort((a, b) => a[k] - b[k])[Math.floor(runs.length / 2)]![k];
  return {
    requests: mid('requests'),
    perSecond: mid('perSecond'),
    p50Ms: mid('p50Ms'),
    p99Ms: mid('p99Ms'),
    errors: Math.max(...runs.map((r) => r.errors)),
    bytes: mid('bytes'),
    meanBytes: mid('meanBytes'),
  };
}

/**
 * How the round compares with the aims: cached answers ≥ 70 % of the bare route's req/s (the bare
 * route sending a body of the same size, and the small one); uncached p99 ≤ 25 ms, and the same p99
 * as a multiple of the bare route's sending the same body at the same connections (what this
 * machine allows any Express answer of that size, measured beside it).
 */
function verdicts(results: Record<string, LoadResult>) {
  const scenarios = Object.entries(results).filter(([n]) => !n.startsWith(BARE));
  const uncached = scenarios.filter(([n]) => n.includes('uncached') || n.includes('miss'));
  const share = (r: LoadResult, bare: LoadResult | undefined) => (bare ? Math.round((r.perSecond / bare.perSecond) * 100) / 100 : null);
  return {
    cachedShareOfBare: Object.fromEntries(
      scenarios
        .filter(([n]) => isCached(n))
        .map(([n, r]) => [n, { sameSizeBody: share(r, results[bareBeside(n)]), smallBody: share(r, results[BARE]) }]),
    ),
    uncachedP99Ms: Object.fromEntries(uncached.map(([n, r]) => [n, r.p99Ms])),
    uncachedP99OverBare: Object.fromEntries(
      uncached.map(([n, r]) => [n, Math.round((r.p99Ms / results[bareBeside(n)]!.p99Ms) * 100) / 100]),
    ),
    errors: Object.fromEntries(
      Object.entries(results)
        .filter(([, r]) => r.errors > 0)
        .map(([n, r]) => [n, r.errors]),
    ),
    // Aim: metering costs at most 5 % of cached req/s (meteringOnShareOfOff ≥ 0.95).
    meteringCost: {
      cachedRpsMeteringOn: results[METERING_ON]?.perSecond ?? null,
      cachedRpsMeteringOff: results[METERING_OFF]?.perSecond ?? null,
      meteringOnShareOfOff: share(results[METERING_ON]!, results[METERING_OFF]),
    },
  };
}

/**
 * The headline figures: per size, uncached p99 (ms, and over the bare route's beside it) and cached
 * share of the bare route's req/s; then the 1M/100k growth.
 */
function summaryOf(rounds: Record<string, unknown>, growth: Record<string, { p50: number; p99: number }> | undefined) {
  const summary: Record<string, number> = {};
  for (const [size, round] of Object.entries(rounds)) {
    const { uncachedP99Ms, uncachedP99OverBare, cachedShareOfBare, meteringCost } = round as ReturnType<typeof verdicts>;
    if (meteringCost.meteringOnShareOfOff !== null)
      summary[`${size} ops: cached req/s metering on / off`] = meteringCost.meteringOnShareOfOff;
    for (const [name, p99] of Object.entries(uncachedP99Ms)) summary[`${size} ops: ${name} p99 ms`] = p99;
    for (const [name, ratio] of Object.entries(uncachedP99OverBare)) summary[`${size} ops: ${name} p99 / bare route's`] = ratio;
    for (const [name, share] of Object.entries(cachedShareOfBare))
      if (share.sameSizeBody !== null) summary[`${size} ops: ${name} share of bare req/s`] = share.sameSizeBody;
  }
  for (const [name, g] of Object.entries(growth ?? {})) summary[`1M/100k p99: ${name}`] = g.p99;
  return summary;
}

export async function runApiBench(partial: Partial<ApiBenchOptions> = {}) {
  const options: ApiBenchOptions = { ...DEFAULT_API_BENCH, ...partial };
  if (!options.databaseUrl) throw new Error('the API benchmark needs PostgreSQL: set BENCH_DATABASE_URL or DATABASE_URL');
  const name = `opscan_bench_api_${Date.now()}`;
  await withAdmin(options.databaseUrl, (admin) => admin.query(`create database ${name}`));
  const url = new URL(options.databaseUrl);
  url.pathname = `/${name}`;
  const db = await createDb({ databaseUrl: url.toString(), max: 4 });
  const rounds: Record<string, unknown> = {};
  try {
    await migrate(db);
    const sample: BenchSample = { userOpHashes: [], senders: [] };
    for (const size of options.sizes) {
      const started = Date.now();
      await loadUserOps(db, size, sample);
      const loadSeconds = (Date.now() - started) / 1000;
      // Steady state: autovacuum would have run on a live database (visibility maps make index-only scans possible).
      await db.query('vacuum analyze');
      // The load's dirty pages would otherwise be written out by a spread checkpoint while the
      // round is measured (gigabytes at 1M ops): its I/O showed as a tail of the p99s.
      await db.query('checkpoint');
      console.error(`api bench: ${size} ops loaded (${loadSeconds} s); measuring`);
      const results = await measureRound(db, url.toString(), options, sample);
      rounds[String(size)] = { loadSeconds, results, ...verdicts(results) };
    }
  } finally {
    await db.close();
    await withAdmin(options.databaseUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`));
  }
  const [small, large] = options.sizes.map((s) => (rounds[String(s)] as { results: Record<string, LoadResult> }).results);
  const growth =
    small && large
      ? Object.fromEntries(
          Object.keys(small)
            .filter((n) => !n.startsWith(BARE) && (n.includes('uncached') || n.includes('miss')))
            .map((n) => [
              n,
              {
                p50: Math.round((large[n]!.p50Ms / small[n]!.p50Ms) * 100) / 100,
                p99: Math.round((large[n]!.p99Ms / small[n]!.p99Ms) * 100) / 100,
              },
            ]),
        )
      : undefined;
  return {
    summary: summaryOf(rounds, growth),
    store: options.redisUrl ? 'redis' : 'in-process',
    connections: options.connections,
    rounds,
    largeOverSmallLatency: growth,
  };
}
