/**
 * `npm run bench -- chains`: opscan against the chain simulator (simchain/) at real networks'
 * density. The indexer runs as the Procfile runs it (bench/procfile.ts: its `indexer:`
 * line, --max-old-space-size=256 included), configured through its environment as a user would
 * (NETWORKS, RPC_URL_<NAME>, RPC_WS_URL_<NAME>, START_BLOCK_<NAME>), on PostgreSQL, a fresh
 * database per run; each simulator runs in its own process (bench/chainsSim.ts) so that the CPU of
 * the indexer, of PostgreSQL and of the simulators is read apart (/proc).
 *
 * - head: the indexer following a simulator's head at the profile's block time (newHeads over
 *   WebSocket) for a bounded time. Lag is sampled as each new head appears: head − indexed_block
 *   (1 = every block before the one just announced was indexed). CPU per block and per second of
 *   chain of the indexer and of PostgreSQL (the backends serving this database; the whole server's
 *   figure beside it includes other users of a shared server). Calls and bytes per block at the
 *   head, from the simulator's counters.
 * - history: a backfill of K blocks ending at the profile's real height, the simulator's head fixed:
 *   blocks/s, ops/s, and the simulator's own CPU per block (it must serve faster than opscan reads).
 * - bill: calls and bytes per block of short histories for each INDEXER_TRANSFERS and
 *   INDEXER_TRACES setting, and per day at the profile's block time.
 * - delegations: the same for INDEXER_DELEGATIONS=ops and all (every block read whole).
 * - population: start-up time and peak RSS (VmHWM) with 1M and 10M rows in known_addresses.
 * - many networks: one indexer following N simulators (the spec map's networks, busiest first);
 *   the largest N whose every lag p99 ≤ 2 blocks, with the CPU of each party.
 * - plans: a short history through each hosted plan's limits: does the indexer reach the head.
 *
 * Sizes come from BENCH_CHAINS_* variables (runChainsBench's doc); the defaults keep the part
 * near a quarter of an hour on a 2-core machine. Figures go to bench/results.json (bench/main.ts)
 * and markdown tables to bench/out/chains.md (MARKDOWN_FILE).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { createDb } from '../shared/db/client.js';
import * as knownAddresses from '../shared/db/tables/knownAddresses.js';
import { envSuffix, findNetworkByChainId } from '../shared/networks.js';
import { findProfile } from '../simchain/profiles.js';
import type { SimChainOptions, SimChainStats } from '../simchain/server.js';
import { freshStore, round, rssMb, type Store } from './indexer.js';
import { postgresCpuSeconds, processCpuSeconds } from './processCpu.js';
import { ROOT, buildProcfile } from './procfile.js';

/** The spec map's networks, busiest first: the many-networks run follows the first N. */
export const NETWORK_MIX = [
  'base',
  'matic',
  'arbitrum-one',
  'mainnet',
  'optimism',
  'bsc',
  'avalanche',
  'gnosis',
  'fantom',
  'fuse',
  'sepolia',
  'base-sepolia',
  'arbitrum-sepolia',
  'goerli',
  'mumbai',
  'optimism-goerli',
  'bnb-testnet',
  'fantom-testnet',
  'avalanche-fuji',
  'base-testnet',
  'arbitrum-goerli',
] as const;

/**
 * Each hosted plan on Base; the plans capping results again on Polygon, whose history ends on a
 * spam block (12,000 Transfer logs at every 500th block: over Infura's 10,000-result cap and
 * Alchemy's 10K rule in one block).
 */
const PLAN_RUNS: ReadonlyArray<[profile: string, plan: string]> = [
  ['base', 'tiny'],
  ['base', 'public'],
  ['base', 'infura'],
  ['base', 'alchemy'],
  ['base', 'quicknode'],
  ['polygon', 'tiny'],
  ['polygon', 'infura'],
  ['polygon', 'alchemy'],
];

/** The bench's lag aim: every lag p99 at most this many blocks. */
const LAG_AIM_BLOCKS = 2;

/** BENCH_CHAINS_DATABASE: the run's database (dropped and created again for each run; name one apart when benches share a server). */
const DATABASE = process.env.BENCH_CHAINS_DATABASE ?? 'opscan_bench_chains';

// ---------------------------------------------------------------------------------------------
// The simulator in its own process

export type SimProcess = {
  pid: number;
  url: string;
  wsUrl: string;
  chainId: number;
  /** The network's canonical name (NETWORKS, RPC_URL_<NAME>). */
  network: string;
  blockTimeMs: number;
  head(): number;
  onHead(listener: (head: number) => void): void;
  stats(): Promise<SimChainStats>;
  stop(): Promise<void>;
};

export async function startSim(options: SimChainOptions & { profile: string }): Promise<SimProcess> {
  return (await startSimProcess([options]))[0]!;
}

/** Simulators in processes of `perProcess` chains each (one process of its own each by default). */
async function startSims(list: Array<SimChainOptions & { profile: string }>, perProcess = 1): Promise<SimProcess[]> {
  // Dealt round the processes (the list is busiest first): each gets a share of the heavy chains.
  const count = Math.ceil(list.length / perProcess);
  const groups = Array.from({ length: count }, (_, g) => list.filter((_, i) => i % count === g));
  const started = await Promise.all(groups.map((group) => startSimProcess(group)));
  return list.map((_, i) => started[i % count]![Math.floor(i / count)]!);
}

/** One simulator process serving `list`'s chains (bench/chainsSim.ts). */
async function startSimProcess(list: Array<SimChainOptions & { profile: string }>): Promise<SimProcess[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/chainsSim.ts'), JSON.stringify(list)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const listeners = list.map(() => [] as Array<(head: number) => void>);
  const waitingStats: Array<(stats: SimChainStats[]) => void> = [];
  const heads = list.map(() => 0);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  type Line = { chain?: number; url?: string; wsUrl?: string; chainId?: number; head?: number; stats?: SimChainStats[] };
  type Started = { url: string; wsUrl: string; chainId: number; head: number };
  const started = list.map(() => null as Started | null);
  await new Promise<void>((resolve, reject) => {
    void exited.then(() => reject(new Error(`the simulator of ${list.map((o) => o.profile).join(', ')} exited (${child.exitCode})`)));
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text) as Line;
      const i = line.chain ?? 0;
      if (line.url) {
        started[i] = line as Started;
        heads[i] = line.head!;
        if (started.every(Boolean)) resolve();
      } else if (line.stats) waitingStats.shift()?.(line.stats);
      else if (line.head !== undefined) {
        heads[i] = line.head;
        for (const listener of listeners[i]!) listener(line.head);
      }
    });
  });
  // One stats request answers for every chain of the process.
  let asking: Promise<SimChainStats[]> | null = null;
  const allStats = (): Promise<SimChainStats[]> =>
    (asking ??= new Promise<SimChainStats[]>((resolve) => {
      waitingStats.push(resolve);
      child.stdin.write('stats\n');
    }).finally(() => (asking = null)));
  let stopping: Promise<void> | null = null;
  return list.map((options, i) => ({
    pid: child.pid!,
    url: started[i]!.url,
    wsUrl: started[i]!.wsUrl,
    chainId: started[i]!.chainId,
    network: findNetworkByChainId(started[i]!.chainId)!.name,
    blockTimeMs: options.blockTimeMs ?? findProfile(options.profile).blockTimeMs,
    head: () => heads[i]!,
    onHead: (listener) => void listeners[i]!.push(listener),
    stats: async () => (await allStats())[i]!,
    stop: () => (stopping ??= stopChild(child, exited, () => child.stdin.end())),
  }));
}

/** Asks a child to stop, then kills it if it has not within 5 s. */
async function stopChild(child: ChildProcess, exited: Promise<void>, ask: () => void): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  ask();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------
// The indexer as the Procfile runs it

type LogEntry = { level?: number; msg?: string; [key: string]: unknown };

export type IndexerProcess = {
  pid: number;
  /** The first entry logged with this message, and when (ms after the process was spawned). */
  logged(msg: string): Promise<{ entry: LogEntry; ms: number }>;
  /** Warnings and errors logged so far: message → times. */
  complaints: Map<string, number>;
  exited: Promise<void>;
  stop(): Promise<void>;
};

type Followed = { sim: SimProcess; startBlock: number };

/** Variables of the bench's own environment that would change what the indexer does. */
const INDEXER_VARIABLES =
  /^(NETWORKS|DEFAULT_NETWORK|INDEXER_|RPC_URL_|RPC_WS_URL_|START_BLOCK_|FINALITY_DEPTH_|ENTRYPOINTS_|METRICS_PORT|LOG_)/;

export function startIndexer(args: string[], store: Store, followed: Followed[], settings: Record<string, string> = {}): IndexerProcess {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !INDEXER_VARIABLES.test(key)));
  Object.assign(
    env,
    store.env,
    { NETWORKS: followed.map((f) => f.sim.network).join(','), LOG_FORMAT: 'json', LOG_LEVEL: 'info' },
    settings,
  );
  for (const { sim, startBlock } of followed) {
    const suffix = envSuffix(sim.network);
    env[`RPC_URL_${suffix}`] = sim.url;
    env[`RPC_WS_URL_${suffix}`] = sim.wsUrl;
    env[`START_BLOCK_${suffix}`] = String(startBlock);
  }
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const seen = new Map<string, { entry: LogEntry; ms: number }>();
  const waiting = new Map<string, Array<(hit: { entry: LogEntry; ms: number }) => void>>();
  const complaints = new Map<string, number>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    if (!text.startsWith('{')) return;
    const entry = JSON.parse(text) as LogEntry;
    const msg = entry.msg ?? '';
    if ((entry.level ?? 0) >= 40) {
      // The error's message beside the line's: "indexing pass failed" says little without it.
      const err = entry.err as { message?: string } | string | undefined;
      const key = err ? `${msg}: ${typeof err === 'string' ? err : err.message}` : msg;
      complaints.set(key, (complaints.get(key) ?? 0) + 1);
    }
    if (seen.has(msg)) return;
    const hit = { entry, ms: performance.now() - spawnedAt };
    seen.set(msg, hit);
    for (const resolve of waiting.get(msg) ?? []) resolve(hit);
    waiting.delete(msg);
  });
  return {
    pid: child.pid!,
    logged: (msg) =>
      seen.has(msg) ? Promise.resolve(seen.get(msg)!) : new Promise((resolve) => waiting.set(msg, [...(waiting.get(msg) ?? []), resolve])),
    complaints,
    exited,
    stop: () => stopChild(child, exited, () => child.kill('SIGTERM')),
  };
}

// ---------------------------------------------------------------------------------------------
// Reading where the indexer stands and what it cost

/** A connection to the run's database for the bench's own reads. */
export async function connect(store: Store): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: store.env.DATABASE_URL });
  await client.connect();
  return client;
}

async function indexedBlock(db: pg.Client, chainId: number): Promise<number | null> {
  const { rows } = await db.query<{ indexed_block: string }>('select indexed_block from indexer_state where chain_id = $1', [chainId]);
  return rows[0] ? Number(rows[0].indexed_block) : null;
}

/** Resolves once the indexer has indexed `block` on every network, or rejects after `timeoutMs`. */
export async function reached(
  db: pg.Client,
  targets: Array<{ chainId: number; block: () => number }>,
  indexer: IndexerProcess,
  timeoutMs: number,
) {
  const deadline = performance.now() + timeoutMs;
  let stopped = false;
  void indexer.exited.then(() => (stopped = true));
  for (;;) {
    const behind = [];
    for (const t of targets) if (((await indexedBlock(db, t.chainId)) ?? -1) < t.block()) behind.push(t.chainId);
    if (behind.length === 0) return;
    if (stopped) throw new Error(`the indexer exited before reaching the head (chains ${behind.join(', ')})`);
    if (performance.now() > deadline)
      throw new Error(`the indexer did not reach the head of chains ${behind.join(', ')} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * CPU of the PostgreSQL backends serving one database (this bench's): summed per backend from
 * /proc between `start()` and the last `sample()`. The server may be shared (its whole CPU is read
 * beside it); a backend that exits between two samples loses its last slice (the indexer keeps its
 * pool open, so few do); the server's shared work (WAL writer, checkpoints) is not in it.
 */
export class DatabaseCpu {
  private readonly at = new Map<number, { first: number; last: number }>();
  private started = false;

  constructor(
    private readonly db: pg.Client,
    private readonly database: string,
  ) {}

  async start(): Promise<void> {
    this.at.clear();
    await this.sample();
    this.started = true;
  }

  async sample(): Promise<void> {
    const { rows } = await this.db.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [this.database],
    );
    for (const { pid } of rows) {
      const now = processCpuSeconds(pid);
      if (now === null) continue;
      // A backend born after start() counts from zero.
      const entry = this.at.get(pid) ?? { first: this.started ? 0 : now, last: now };
      this.at.set(pid, { ...entry, last: now });
    }
  }

  seconds(): number {
    return [...this.at.values()].reduce((sum, { first, last }) => sum + last - first, 0);
  }
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

const callsOf = (stats: SimChainStats): number => stats.calls;
export const delta = (after: SimChainStats, before: SimChainStats) => ({
  calls: callsOf(after) - callsOf(before),
  bytes: after.bytesOut - before.bytesOut,
  byMethod: Object.fromEntries(
    Object.entries(after.byMethod)
      .map(([method, n]) => [method, n - (before.byMethod[method] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  ),
});

const blocksPerDay = (blockTimeMs: number): number => 86_400_000 / blockTimeMs;

// ---------------------------------------------------------------------------------------------
// Runs

type Context = { databaseUrl: string; indexerArgs: string[] };

type FollowFigures = {
  networks: Array<{
    network: string;
    blocks: number;
    lagSamples: number;
    lagP50: number;
    lagP99: number;
    lagMax: number;
    callsPerBlock: number;
    kbPerBlock: number;
    callsPerDay: number;
    gbPerDay: number;
    byMethodPerBlock: Record<string, number>;
    /** The network's worker thread's CPU as a share of one core, and its V8 heap (reserved + external) at the end. */
    workerCpuShare: number | null;
    workerHeapMb: number | null;
  }>;
  seconds: number;
  cpuSeconds: { indexer: number; postgres: number; postgresServer: number | null; simulators: number };
  indexerPeakRssMb: number | null;
  indexerRssMb: number | null;
  complaints: Record<string, number>;
};

/** The simulator processes (several chains may share one), each once. */
const simPids = (sims: SimProcess[]): number[] => [...new Set(sims.map((sim) => sim.pid))];

/** A loopback port free now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Each network worker's CPU seconds and memory (MB) from the indexer's /metrics (empty when it runs none). */
async function workerFigures(port: number): Promise<Map<string, { cpuSeconds: number; heapMb: number }>> {
  const figures = new Map<string, { cpuSeconds: number; heapMb: number }>();
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const entry = (network: string) => figures.get(network) ?? figures.set(network, { cpuSeconds: 0, heapMb: 0 }).get(network)!;
  for (const [, name, labels, value] of text.matchAll(/^(opscan_indexer_network_(?:cpu_seconds|heap_bytes))\{([^}]*)\} (\S+)$/gm)) {
    const network = /network="([^"]+)"/.exec(labels!)?.[1];
    if (!network) continue;
    if (name === 'opscan_indexer_network_cpu_seconds') entry(network).cpuSeconds = Number(value);
    else if (/kind="(total|external)"/.test(labels!)) entry(network).heapMb += Number(value) / 1e6;
  }
  return figures;
}

/**
 * One indexer following `profiles`' simulators at their block times for `seconds` after every
 * network first reached its head (heads announced before that are the warm-up).
 */
async function follow(
  context: Context,
  profiles: string[],
  seconds: number,
  { settings = {}, simsPerProcess = 1 }: { settings?: Record<string, string>; simsPerProcess?: number } = {},
): Promise<FollowFigures> {
  const sims = await startSims(
    profiles.map((profile) => ({ profile })),
    simsPerProcess,
  );
  const store = await freshStore(context.databaseUrl, DATABASE);
  const db = await connect(store);
  let indexer: IndexerProcess | null = null;
  // Each network's worker reports its own thread's CPU and heap at /metrics.
  const metricsPort = await freePort();
  try {
    indexer = startIndexer(
      context.indexerArgs,
      store,
      sims.map((sim) => ({ sim, startBlock: sim.head() })),
      { METRICS_PORT: String(metricsPort), ...settings },
    );
    const firstHeads = sims.map((sim) => sim.head());
    // Each network's worker loads the indexer's modules on its own thread first: ~1.2 CPU-s each here.
    await reached(
      db,
      sims.map((sim, i) => ({ chainId: sim.chainId, block: () => firstHeads[i]! })),
      indexer,
      Math.max(120_000, profiles.length * 15_000),
    );
    const databaseCpu = new DatabaseCpu(db, DATABASE);
    await databaseCpu.start();
    const lags = sims.map(() => [] as number[]);
    const startHeads = sims.map((sim) => sim.head());
    const statsBefore = await Promise.all(sims.map((sim) => sim.stats()));
    const workersBefore = await workerFigures(metricsPort);
    const cpuBefore = {
      indexer: processCpuSeconds(indexer.pid) ?? 0,
      server: store.postmasterPid === null ? null : postgresCpuSeconds(store.postmasterPid),
      sims: simPids(sims).map((pid) => processCpuSeconds(pid) ?? 0),
    };
    const startedAt = performance.now();
    let measuring = true;
    // Samples are taken one at a time (a slow read must not pile up reads behind it).
    let sampling: Promise<unknown> = Promise.resolve();
    sims.forEach((sim, i) =>
      sim.onHead((head) => {
        if (!measuring) return;
        sampling = sampling.then(async () => {
          const indexed = await indexedBlock(db, sim.chainId);
          if (indexed !== null && measuring) lags[i]!.push(head - indexed);
          await databaseCpu.sample();
        });
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    measuring = false;
    await sampling;
    await databaseCpu.sample();
    const elapsed = (performance.now() - startedAt) / 1000;
    const statsAfter = await Promise.all(sims.map((sim) => sim.stats()));
    const server = store.postmasterPid === null ? null : postgresCpuSeconds(store.postmasterPid);
    const cpuSeconds = {
      indexer: round((processCpuSeconds(indexer.pid) ?? 0) - cpuBefore.indexer),
      postgres: round(databaseCpu.seconds()),
      postgresServer: server === null || cpuBefore.server === null ? null : round(server - cpuBefore.server),
      simulators: round(simPids(sims).reduce((sum, pid, i) => sum + (processCpuSeconds(pid) ?? 0) - cpuBefore.sims[i]!, 0)),
    };
    const workersAfter = await workerFigures(metricsPort);
    return {
      networks: sims.map((sim, i) => {
        const blocks = sim.head() - startHeads[i]!;
        const bill = delta(statsAfter[i]!, statsBefore[i]!);
        const perBlock = (n: number) => (blocks > 0 ? n / blocks : NaN);
        return {
          network: sim.network,
          blocks,
          lagSamples: lags[i]!.length,
          lagP50: percentile(lags[i]!, 50),
          lagP99: percentile(lags[i]!, 99),
          lagMax: Math.max(...lags[i]!),
          callsPerBlock: round(perBlock(bill.calls)),
          kbPerBlock: round(perBlock(bill.bytes) / 1000, 1),
          callsPerDay: Math.round(perBlock(bill.calls) * blocksPerDay(sim.blockTimeMs)),
          gbPerDay: round((perBlock(bill.bytes) * blocksPerDay(sim.blockTimeMs)) / 1e9, 2),
          byMethodPerBlock: Object.fromEntries(Object.entries(bill.byMethod).map(([m, n]) => [m, round(perBlock(n))])),
          workerCpuShare: workersAfter.has(sim.network)
            ? round((workersAfter.get(sim.network)!.cpuSeconds - (workersBefore.get(sim.network)?.cpuSeconds ?? 0)) / elapsed)
            : null,
          workerHeapMb: workersAfter.has(sim.network) ? round(workersAfter.get(sim.network)!.heapMb, 1) : null,
        };
      }),
      seconds: round(elapsed, 1),
      cpuSeconds,
      indexerPeakRssMb: rssMb(indexer.pid),
      indexerRssMb: rssMb(indexer.pid, 'VmRSS'),
      complaints: Object.fromEntries(indexer.complaints),
    };
  } finally {
    await indexer?.stop();
    await db.end();
    await store.drop();
    await Promise.all(sims.map((sim) => sim.stop()));
  }
}

type HistoryFigures = {
  blocks: number;
  reachedHead: boolean;
  /** null: the head was not reached in time. */
  seconds: number | null;
  blocksPerSecond: number | null;
  ops: number;
  opsPerSecond: number | null;
  /** The transfer backfill of the addresses made known on the way (INDEXER_TRANSFERS=known), after the head was reached. */
  transferBackfillSeconds: number | null;
  cpuSeconds: { indexer: number; postgres: number; simulator: number };
  /** Blocks the simulator serves per second of its own CPU (its ceiling on one core). */
  simulatorBlocksPerCpuSecond: number;
  callsPerBlock: number;
  kbPerBlock: number;
  byMethod: Record<string, number>;
  complaints: Record<string, number>;
  error?: string;
};

/**
 * The indexer backfilling `blocks` blocks ending at the profile's default height (the simulator's
 * head fixed), timed from its "indexer started" line to indexed_block = head; then, under known,
 * until the transfer backfill has no pending address (at most `timeoutMs` in all).
 */
async function history(
  context: Context,
  profileName: string,
  blocks: number,
  { settings = {}, plan, timeoutMs = 300_000 }: { settings?: Record<string, string>; plan?: string; timeoutMs?: number } = {},
): Promise<HistoryFigures> {
  const profile = findProfile(profileName);
  const fromBlock = profile.defaultFromBlock - blocks + 1;
  const sim = await startSim({ profile: profileName, fromBlock, blocks, blockTimeMs: 0, ...(plan ? { plan } : {}) });
  const store = await freshStore(context.databaseUrl, DATABASE);
  const db = await connect(store);
  let indexer: IndexerProcess | null = null;
  try {
    indexer = startIndexer(context.indexerArgs, store, [{ sim, startBlock: fromBlock }], settings);
    await indexer.logged('indexer started');
    const databaseCpu = new DatabaseCpu(db, DATABASE);
    await databaseCpu.start();
    const before = { indexer: processCpuSeconds(indexer.pid) ?? 0, sim: processCpuSeconds(sim.pid) ?? 0, stats: await sim.stats() };
    const startedAt = performance.now();
    const sampler = setInterval(() => void databaseCpu.sample().catch(() => undefined), 500);
    let error: string | undefined;
    let seconds = NaN;
    let transferBackfillSeconds: number | null = null;
    try {
      await reached(db, [{ chainId: sim.chainId, block: () => sim.head() }], indexer, timeoutMs);
      seconds = (performance.now() - startedAt) / 1000;
      if ((settings.INDEXER_TRANSFERS ?? 'known') === 'known') {
        await pendingBackfillDone(db, sim.chainId, startedAt + timeoutMs);
        transferBackfillSeconds = round((performance.now() - startedAt) / 1000 - seconds, 1);
      }
    } catch (err) {
      error = (err as Error).message;
    } finally {
      clearInterval(sampler);
    }
    await databaseCpu.sample();
    const stats = delta(await sim.stats(), before.stats);
    const simCpu = (processCpuSeconds(sim.pid) ?? 0) - before.sim;
    const ops = Number((await db.query<{ n: string }>('select count(*) as n from user_ops')).rows[0]!.n);
    return {
      blocks,
      reachedHead: error === undefined,
      seconds: error ? null : round(seconds, 1),
      blocksPerSecond: error ? null : round(blocks / seconds, 1),
      ops,
      opsPerSecond: error ? null : Math.round(ops / seconds),
      transferBackfillSeconds,
      cpuSeconds: {
        indexer: round((processCpuSeconds(indexer.pid) ?? 0) - before.indexer),
        postgres: round(databaseCpu.seconds()),
        simulator: round(simCpu),
      },
      simulatorBlocksPerCpuSecond: Math.round(blocks / simCpu),
      callsPerBlock: round(stats.calls / blocks),
      kbPerBlock: round(stats.bytes / blocks / 1000, 1),
      byMethod: stats.byMethod,
      complaints: Object.fromEntries(indexer.complaints),
      ...(error ? { error } : {}),
    };
  } finally {
    await indexer?.stop();
    await db.end();
    await store.drop();
    await sim.stop();
  }
}

/** Waits until no known address of the chain awaits its transfer backfill (or the deadline passes: throws). */
async function pendingBackfillDone(db: pg.Client, chainId: number, deadline: number): Promise<void> {
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      'select count(*) as n from known_addresses where chain_id = $1 and backfilled_to is null',
      [chainId],
    );
    if (rows[0]!.n === '0') return;
    if (performance.now() > deadline) throw new Error(`${rows[0]!.n} known addresses still await their transfer backfill`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** One start of the indexer on the population: spawn → its "known addresses loaded" line. */
type PopulationStart = {
  /** From spawning the process to its "known addresses loaded" line, and to its "indexer started" line (the process's own start, before any read). */
  startupSeconds: number;
  processStartSeconds: number;
  /** That line's own ms (reading the stored filter and the table) and how many addresses it read from the table. */
  loadMs: number;
  /** Of loadMs, reading the stored filter (0 when none was stored). */
  storedMs: number;
  readAddresses: number;
  stored: boolean;
  filterMb: number;
  /** Peak resident set (VmHWM) once it has followed the head for a few blocks. */
  peakRssMb: number | null;
  headBlocksIndexed: number;
};

type PopulationFigures = {
  knownAddresses: number;
  insertSeconds: number;
  /** The baselines of the same run: `select count(*)` of the network's rows, and reading every address (the pages a start without a stored filter reads). */
  countMs: number;
  readAllMs: number;
  /** The first start after the rows were inserted (no stored filter: every address read), and how long it took to store its filter. */
  first: PopulationStart;
  storeMs: number;
  /** Restarts reading the stored filter, and their medians. */
  restarts: PopulationStart[];
  startupSeconds: number;
  loadMs: number;
  peakRssMb: number | null;
};

const medianOf = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Start-up and memory with `counts` (ascending) rows in known_addresses for Base (the table grows
 * between measurements, vacuumed after each insert). Rows are random addresses seen at block 1 and
 * backfilled already, so no transfer backfill runs. Per count: the baselines (count and read every
 * address), a first start (no stored filter: the indexer reads every address, then stores its
 * filter), then `restarts` starts reading the stored filter; each start follows the head for
 * `followSeconds` after loading.
 */
async function population(context: Context, counts: number[], followSeconds: number, restarts = 3): Promise<PopulationFigures[]> {
  const store = await freshStore(context.databaseUrl, DATABASE);
  const db = await connect(store);
  const figures: PopulationFigures[] = [];
  try {
    let rows = 0;
    for (const count of counts) {
      const t0 = performance.now();
      // md5 gives 16 bytes; 4 more from a second one make an address.
      await db.query(
        `insert into known_addresses (chain_id, address, first_block, backfill_to, backfilled_to)
         select 8453, decode(md5(i::text) || left(md5((-i)::text), 8), 'hex'), 1, 0, 1 from generate_series($1::bigint, $2::bigint) i
         on conflict do nothing`,
        [rows + 1, count],
      );
      // Rows inserted below a stored filter's through_block behind the indexer's back: the filter
      // no longer holds every address, so it goes (as a start after an upgrade finds none).
      await db.query('delete from known_address_filters where chain_id = 8453');
      // As autovacuum leaves a table that has lived a while: the visibility map set, so the
      // indexer's page reads are index-only scans (right after the insert they visit the heap for
      // every row: 10M addresses read in ~62 s instead of ~12 s here).
      await db.query('vacuum (analyze) known_addresses');
      rows = count;
      const insertSeconds = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      await db.query('select count(*) from known_addresses where chain_id = 8453');
      const countMs = performance.now() - t1;
      const reader = await createDb({ databaseUrl: store.env.DATABASE_URL!, max: 1 });
      const t2 = performance.now();
      try {
        for (let after: string | null = null; ;) {
          const page = await knownAddresses.listPage(reader, 8453, after, 500_000);
          if (page.count === 0) break;
          after = page.last;
        }
      } finally {
        await reader.close();
      }
      const readAllMs = performance.now() - t2;
      const sim = await startSim({ profile: 'base' });
      try {
        const startBlock = sim.head();
        const start = async (
          until: (indexer: IndexerProcess) => Promise<unknown>,
        ): Promise<PopulationStart & { stored: boolean; storeMs: number | null }> => {
          const indexer = startIndexer(context.indexerArgs, store, [{ sim, startBlock }]);
          try {
            const exited = indexer.exited.then(() => {
              throw new Error(`the indexer exited before loading ${count} known addresses`);
            });
            const [started, loaded] = await Promise.race([
              Promise.all([indexer.logged('indexer started'), indexer.logged('known addresses loaded')]),
              exited,
            ]);
            const from = (await indexedBlock(db, sim.chainId)) ?? startBlock;
            const stored = await Promise.race([until(indexer), exited]);
            return {
              startupSeconds: round(loaded.ms / 1000),
              processStartSeconds: round(started.ms / 1000),
              loadMs: Number(loaded.entry.ms),
              storedMs: Number(loaded.entry.storedMs),
              readAddresses: Number(loaded.entry.readAddresses),
              stored: loaded.entry.stored === true,
              filterMb: round(Number(loaded.entry.filterBytes) / 1e6, 1),
              peakRssMb: rssMb(indexer.pid),
              headBlocksIndexed: ((await indexedBlock(db, sim.chainId)) ?? startBlock) - from,
              storeMs: stored === null ? null : Number((stored as { entry: LogEntry }).entry.ms),
            };
          } finally {
            await indexer.stop();
          }
        };
        const follow = () => new Promise<null>((resolve) => setTimeout(() => resolve(null), followSeconds * 1000));
        const { storeMs, ...first } = await start((indexer) => indexer.logged('known address filter stored'));
        const again: PopulationStart[] = [];
        for (let i = 0; i < restarts; i++) {
          const { storeMs: _, ...run } = await start(follow);
          again.push(run);
        }
        figures.push({
          knownAddresses: count,
          insertSeconds: round(insertSeconds, 1),
          countMs: Math.round(countMs),
          readAllMs: Math.round(readAllMs),
          first,
          storeMs: storeMs ?? 0,
          restarts: again,
          startupSeconds: round(medianOf(again.map((r) => r.startupSeconds))),
          loadMs: Math.round(medianOf(again.map((r) => r.loadMs))),
          peakRssMb: Math.max(first.peakRssMb ?? 0, ...again.map((r) => r.peakRssMb ?? 0)) || null,
        });
      } finally {
        await sim.stop();
      }
    }
    return figures;
  } finally {
    await db.end();
    await store.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// The part

export type ChainsBenchOptions = {
  databaseUrl: string | undefined;
  /** BENCH_CHAINS_PROFILES (default base,polygon,arbitrum,mainnet). */
  profiles?: string[];
  /** BENCH_CHAINS_HEAD_BLOCKS (default 24): head blocks followed per profile (time = blocks × block time, 30–72 s). */
  headBlocks?: number;
  /** BENCH_CHAINS_HISTORY_BLOCKS (default 200; arbitrum 8× as many, its blocks are that much thinner). */
  historyBlocks?: number;
  /** BENCH_CHAINS_BILL_BLOCKS (default 100): blocks of each INDEXER_TRANSFERS × INDEXER_TRACES history (base). */
  billBlocks?: number;
  /** BENCH_CHAINS_POPULATION (default 1000000,10000000). */
  population?: number[];
  /** BENCH_CHAINS_NETWORKS (default 1,21): how many networks each many-networks step follows (1 is the baseline: one process per network). */
  networkCounts?: number[];
  /** BENCH_CHAINS_NETWORKS_SECONDS (default 60). */
  networksSeconds?: number;
  /** BENCH_CHAINS_SIMS_PER_PROCESS (default 7): simulated networks served by one simulator process in the many-networks run. */
  simsPerProcess?: number;
  /** BENCH_CHAINS_PLAN_BLOCKS (default 30): blocks of each plan's history. */
  planBlocks?: number;
  /** BENCH_CHAINS_SECTIONS (default all): head,history,bill,delegations,population,networks,plans. */
  sections?: string[];
};

const list = (value: string | undefined): string[] | undefined =>
  value
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function chainsOptionsFromEnv(databaseUrl: string | undefined): ChainsBenchOptions {
  const env = process.env;
  const numbers = (value: string | undefined) => list(value)?.map(Number);
  const number = (value: string | undefined) => (value ? Number(value) : undefined);
  return {
    databaseUrl,
    profiles: list(env.BENCH_CHAINS_PROFILES),
    headBlocks: number(env.BENCH_CHAINS_HEAD_BLOCKS),
    historyBlocks: number(env.BENCH_CHAINS_HISTORY_BLOCKS),
    billBlocks: number(env.BENCH_CHAINS_BILL_BLOCKS),
    population: numbers(env.BENCH_CHAINS_POPULATION),
    networkCounts: numbers(env.BENCH_CHAINS_NETWORKS),
    networksSeconds: number(env.BENCH_CHAINS_NETWORKS_SECONDS),
    simsPerProcess: number(env.BENCH_CHAINS_SIMS_PER_PROCESS),
    planBlocks: number(env.BENCH_CHAINS_PLAN_BLOCKS),
    sections: list(env.BENCH_CHAINS_SECTIONS),
  };
}

export async function runChainsBench(options: ChainsBenchOptions): Promise<Record<string, unknown>> {
  if (!options.databaseUrl) throw new Error('the chains bench runs on PostgreSQL: set BENCH_DATABASE_URL (or DATABASE_URL)');
  const profiles = options.profiles ?? ['base', 'polygon', 'arbitrum', 'mainnet'];
  const sections = new Set(options.sections ?? ['head', 'history', 'bill', 'delegations', 'population', 'networks', 'plans']);
  const procfile = buildProcfile();
  const context: Context = { databaseUrl: options.databaseUrl, indexerArgs: procfile.args('indexer') };
  const say = (text: string) => process.stderr.write(`[chains] ${text}\n`);
  const result: Record<string, unknown> = {};
  const summary: Record<string, number | null> = {};
  try {
    if (sections.has('head')) {
      const head: Record<string, FollowFigures> = {};
      for (const name of profiles) {
        const blockTimeMs = findProfile(name).blockTimeMs;
        const seconds = Math.min(72, Math.max(30, ((options.headBlocks ?? 24) * blockTimeMs) / 1000));
        say(`head: ${name}, ${seconds} s`);
        const run = (head[name] = await follow(context, [name], seconds));
        const network = run.networks[0]!;
        const blocks = Math.max(1, network.blocks);
        Object.assign(summary, {
          [`head.${name}.lagP50`]: network.lagP50,
          [`head.${name}.lagP99`]: network.lagP99,
          [`head.${name}.indexerCpuMsPerBlock`]: Math.round((run.cpuSeconds.indexer * 1000) / blocks),
          [`head.${name}.postgresCpuMsPerBlock`]: Math.round((run.cpuSeconds.postgres * 1000) / blocks),
          [`head.${name}.cpuPerChainSecond`]: round((run.cpuSeconds.indexer + run.cpuSeconds.postgres) / run.seconds),
          [`head.${name}.callsPerBlock`]: network.callsPerBlock,
          [`head.${name}.callsPerDay`]: network.callsPerDay,
          [`head.${name}.gbPerDay`]: network.gbPerDay,
        });
      }
      result.head = head;
    }
    if (sections.has('history')) {
      const runs: Record<string, HistoryFigures> = {};
      for (const name of profiles) {
        const blocks = (options.historyBlocks ?? 200) * (findProfile(name).blockTimeMs < 1000 ? 8 : 1);
        say(`history: ${name}, ${blocks} blocks`);
        const run = (runs[name] = await history(context, name, blocks));
        Object.assign(summary, {
          [`history.${name}.blocksPerSecond`]: run.blocksPerSecond,
          [`history.${name}.opsPerSecond`]: run.opsPerSecond,
          [`history.${name}.simulatorBlocksPerCpuSecond`]: run.simulatorBlocksPerCpuSecond,
          [`history.${name}.transferBackfillSeconds`]: run.transferBackfillSeconds,
        });
      }
      result.history = runs;
    }
    if (sections.has('bill')) {
      const blocks = options.billBlocks ?? 100;
      const runs: Record<string, HistoryFigures & { callsPerDay: number; gbPerDay: number }> = {};
      for (const transfers of ['known', 'ops'])
        for (const traces of ['needed', 'off']) {
          say(`bill: base, ${blocks} blocks, INDEXER_TRANSFERS=${transfers} INDEXER_TRACES=${traces}`);
          const run = await history(context, 'base', blocks, { settings: { INDEXER_TRANSFERS: transfers, INDEXER_TRACES: traces } });
          const perDay = blocksPerDay(findProfile('base').blockTimeMs);
          runs[`${transfers}/${traces}`] = {
            ...run,
            callsPerDay: Math.round(run.callsPerBlock * perDay),
            gbPerDay: round((run.kbPerBlock * 1000 * perDay) / 1e9, 2),
          };
          summary[`bill.base.${transfers}.${traces}.callsPerBlock`] = run.callsPerBlock;
          summary[`bill.base.${transfers}.${traces}.kbPerBlock`] = run.kbPerBlock;
        }
      result.bill = runs;
    }
    if (sections.has('delegations')) {
      // INDEXER_DELEGATIONS=all against ops on the same history: what reading every block whole costs.
      const blocks = options.billBlocks ?? 100;
      const runs: Record<string, HistoryFigures> = {};
      for (const delegations of ['ops', 'all']) {
        say(`delegations: base, ${blocks} blocks, INDEXER_TRANSFERS=ops INDEXER_DELEGATIONS=${delegations}`);
        runs[delegations] = await history(context, 'base', blocks, {
          settings: { INDEXER_TRANSFERS: 'ops', INDEXER_TRACES: 'needed', INDEXER_DELEGATIONS: delegations },
        });
        summary[`delegations.base.${delegations}.callsPerBlock`] = runs[delegations].callsPerBlock;
        summary[`delegations.base.${delegations}.kbPerBlock`] = runs[delegations].kbPerBlock;
      }
      result.delegations = runs;
    }
    if (sections.has('population')) {
      const counts = options.population ?? [1_000_000, 10_000_000];
      say(`population: ${counts.join(', ')} known addresses`);
      const runs = await population(context, counts, 10);
      for (const run of runs) {
        summary[`population.${run.knownAddresses}.startupSeconds`] = run.startupSeconds;
        summary[`population.${run.knownAddresses}.peakRssMb`] = run.peakRssMb;
        summary[`population.${run.knownAddresses}.firstStartupSeconds`] = run.first.startupSeconds;
        summary[`population.${run.knownAddresses}.countMs`] = run.countMs;
      }
      result.population = runs;
    }
    if (sections.has('networks')) {
      const steps: Array<FollowFigures & { count: number; worstLagP99: number }> = [];
      let fits = 0;
      for (const count of options.networkCounts ?? [1, 21]) {
        say(`networks: ${count}`);
        const run = await follow(context, NETWORK_MIX.slice(0, count), options.networksSeconds ?? 60, {
          simsPerProcess: options.simsPerProcess ?? 7,
        });
        const worstLagP99 = Math.max(...run.networks.map((n) => n.lagP99));
        steps.push({ ...run, count, worstLagP99 });
        summary[`networks.${count}.worstLagP99`] = worstLagP99;
        summary[`networks.${count}.within`] = run.networks.filter((n) => n.lagP99 <= LAG_AIM_BLOCKS).length;
        summary[`networks.${count}.indexerCpuShare`] = round(run.cpuSeconds.indexer / run.seconds);
        summary[`networks.${count}.postgresCpuShare`] = round(run.cpuSeconds.postgres / run.seconds);
        summary[`networks.${count}.simulatorsCpuShare`] = round(run.cpuSeconds.simulators / run.seconds);
        summary[`networks.${count}.indexerPeakRssMb`] = run.indexerPeakRssMb;
        if (worstLagP99 <= LAG_AIM_BLOCKS) fits = Math.max(fits, count);
      }
      summary['networks.largestWithinAim'] = fits;
      result.networks = steps;
    }
    if (sections.has('plans')) {
      const blocks = options.planBlocks ?? 30;
      const runs: Record<string, HistoryFigures> = {};
      for (const [profile, plan] of PLAN_RUNS) {
        say(`plans: ${plan}, ${profile}, ${blocks} blocks`);
        const run = (runs[`${profile}/${plan}`] = await history(context, profile, blocks, { plan, timeoutMs: 90_000 }));
        summary[`plans.${profile}.${plan}.reachedHead`] = run.reachedHead ? 1 : 0;
        summary[`plans.${profile}.${plan}.seconds`] = run.seconds;
      }
      result.plans = runs;
    }
  } finally {
    procfile.cleanup();
  }
  const markdown = markdownOf(result);
  mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
  writeFileSync(join(ROOT, MARKDOWN_FILE), markdown);
  say(`tables written to ${MARKDOWN_FILE}`);
  return { summary, ...result, indexerCommand: `node ${context.indexerArgs.slice(0, -1).join(' ')} dist/indexer/main.js` };
}

/** Where the run's markdown tables go (docs/performance.md's "Real networks (chain simulator)" takes them from there). */
const MARKDOWN_FILE = 'bench/out/chains.md';

type Cell = string | number | boolean | null | undefined;
const cell = (value: Cell): string =>
  value === null || value === undefined || Number.isNaN(value)
    ? '–'
    : typeof value === 'number'
      ? value.toLocaleString('en-US')
      : String(value);
const table = (header: string[], rows: Cell[][]): string =>
  [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join(
    '\n',
  );

/** The figures of a run as markdown: the bench's aims (met or not, with the figure), then each section's table. */
function markdownOf(result: Record<string, unknown>): string {
  const out: string[] = [];
  const aims: Cell[][] = [];
  const head = result.head as Record<string, FollowFigures> | undefined;
  for (const name of ['base', 'arbitrum']) {
    const run = head?.[name];
    if (!run) continue;
    const lag = run.networks[0]!.lagP99;
    const cpu = (run.cpuSeconds.indexer + run.cpuSeconds.postgres) / run.seconds;
    aims.push([
      `${name}-like head: lag p99 ≤ ${LAG_AIM_BLOCKS} blocks on under one core`,
      `lag p99 ${lag}, indexer + PostgreSQL ${round(cpu)} CPU-s per s of chain`,
      lag <= LAG_AIM_BLOCKS && cpu < 1 ? 'met' : 'not met',
    ]);
  }
  const networks = result.networks as Array<FollowFigures & { count: number; worstLagP99: number }> | undefined;
  const all = networks?.find((n) => n.count === NETWORK_MIX.length);
  if (all) {
    const within = all.networks.filter((n) => n.lagP99 <= LAG_AIM_BLOCKS);
    aims.push([
      `the spec map's ${NETWORK_MIX.length} networks in one deployment, every lag p99 ≤ ${LAG_AIM_BLOCKS}`,
      `${within.length} of ${NETWORK_MIX.length} (worst p99 ${all.worstLagP99}: ${all.networks
        .filter((n) => n.lagP99 > LAG_AIM_BLOCKS)
        .map((n) => `${n.network} ${n.lagP99}`)
        .join(', ')})`,
      within.length === NETWORK_MIX.length ? 'met' : 'not met',
    ]);
    const rss = all.indexerPeakRssMb ?? Infinity;
    aims.push([
      `indexer memory for ${NETWORK_MIX.length} networks ≤ 1 GB`,
      `peak RSS ${all.indexerPeakRssMb} MB (${round(rss / NETWORK_MIX.length, 1)} MB a network; one process for one network: ${networks?.find((n) => n.count === 1)?.indexerPeakRssMb ?? '–'} MB)`,
      rss <= 1024 ? 'met' : 'not met',
    ]);
  }
  const population = result.population as PopulationFigures[] | undefined;
  const largest = population?.at(-1);
  if (largest)
    aims.push([
      `RSS ≤ 512 MB and start-up < 10 s at 10M known addresses`,
      `${largest.knownAddresses.toLocaleString('en-US')} known: peak RSS ${largest.peakRssMb} MB, start-up ${largest.startupSeconds} s (median of ${largest.restarts.length} restarts reading the stored filter; the first start, reading every address, ${largest.first.startupSeconds} s; select count(*) ${largest.countMs} ms)`,
      largest.knownAddresses >= 10_000_000 && (largest.peakRssMb ?? Infinity) <= 512 && largest.startupSeconds < 10 ? 'met' : 'not met',
    ]);
  const plans = result.plans as Record<string, HistoryFigures> | undefined;
  if (plans) {
    const stalled = Object.entries(plans).filter(([, run]) => !run.reachedHead);
    aims.push([
      'no stall on any plan',
      stalled.length === 0 ? `every plan reached the head` : `stalled on ${stalled.map(([plan]) => plan).join(', ')}`,
      stalled.length === 0 ? 'met' : 'not met',
    ]);
  }
  out.push('#### Aims of issue 31\n', table(['aim', 'measured', ''], aims));
  if (head)
    out.push(
      '\n#### Following the head (lag sampled as each new head appears: 1 = every earlier block indexed)\n',
      table(
        [
          'profile',
          'blocks',
          'lag p50',
          'lag p99',
          'lag max',
          'indexer CPU ms/block',
          'PostgreSQL CPU ms/block',
          'CPU-s per s of chain',
          'calls/block',
          'kB/block',
          'calls/day',
          'GB/day',
        ],
        Object.entries(head).map(([name, run]) => {
          const n = run.networks[0]!;
          const blocks = Math.max(1, n.blocks);
          return [
            name,
            n.blocks,
            n.lagP50,
            n.lagP99,
            n.lagMax,
            Math.round((run.cpuSeconds.indexer * 1000) / blocks),
            Math.round((run.cpuSeconds.postgres * 1000) / blocks),
            round((run.cpuSeconds.indexer + run.cpuSeconds.postgres) / run.seconds),
            n.callsPerBlock,
            n.kbPerBlock,
            n.callsPerDay,
            n.gbPerDay,
          ];
        }),
      ),
    );
  const historyRow = (name: string, run: HistoryFigures): Cell[] => [
    name,
    run.blocks,
    run.reachedHead ? run.seconds : 'stalled',
    run.blocksPerSecond,
    run.opsPerSecond,
    run.cpuSeconds.indexer,
    run.cpuSeconds.postgres,
    run.cpuSeconds.simulator,
    run.simulatorBlocksPerCpuSecond,
    run.transferBackfillSeconds,
    run.callsPerBlock,
    run.kbPerBlock,
  ];
  const historyHeader = [
    'run',
    'blocks',
    's',
    'blocks/s',
    'ops/s',
    'indexer CPU-s',
    'PostgreSQL CPU-s',
    'simulator CPU-s',
    'simulator blocks per CPU-s',
    'transfer backfill s',
    'calls/block',
    'kB/block',
  ];
  const historyRuns = result.history as Record<string, HistoryFigures> | undefined;
  if (historyRuns)
    out.push(
      "\n#### History (backfill ending at the profile's height)\n",
      table(
        historyHeader,
        Object.entries(historyRuns).map(([n, r]) => historyRow(n, r)),
      ),
    );
  const bill = result.bill as Record<string, HistoryFigures & { callsPerDay: number; gbPerDay: number }> | undefined;
  if (bill)
    out.push(
      '\n#### RPC bill (base, short histories; per day at a 2 s block)\n',
      table(
        ['INDEXER_TRANSFERS/INDEXER_TRACES', 'calls/block', 'kB/block', 'calls/day', 'GB/day', 'calls by method'],
        Object.entries(bill).map(([setting, r]) => [
          setting,
          r.callsPerBlock,
          r.kbPerBlock,
          r.callsPerDay,
          r.gbPerDay,
          Object.entries(r.byMethod)
            .map(([m, n]) => `${m} ${n}`)
            .join(', '),
        ]),
      ),
    );
  if (population)
    out.push(
      '\n#### Population (base, known_addresses rows)\n',
      table(
        [
          'known addresses',
          'start',
          'start-up s (spawn → "known addresses loaded")',
          'process start s (spawn → "indexer started")',
          'load ms',
          'of which the stored filter ms',
          'addresses read from the table',
          'filter MB',
          'peak RSS MB',
          'head blocks indexed after',
        ],
        population.flatMap((p) =>
          [p.first, ...p.restarts].map((r, i) => [
            p.knownAddresses,
            i === 0 ? `first (no stored filter; storing it took ${p.storeMs} ms)` : `restart ${i} (stored filter)`,
            r.startupSeconds,
            r.processStartSeconds,
            r.loadMs,
            r.storedMs,
            r.readAddresses,
            r.filterMb,
            r.peakRssMb,
            r.headBlocksIndexed,
          ]),
        ),
      ),
      "\nBaselines of the same run and the restarts' medians:\n",
      table(
        [
          'known addresses',
          'select count(*) ms',
          'every address read (listPage) ms',
          'restart start-up s (median)',
          'restart load ms (median)',
          'load / count(*)',
        ],
        population.map((p) => [
          p.knownAddresses,
          p.countMs,
          p.readAllMs,
          p.startupSeconds,
          p.loadMs,
          round(p.loadMs / Math.max(1, p.countMs)),
        ]),
      ),
    );
  const steps = result.networks as Array<FollowFigures & { count: number; worstLagP99: number }> | undefined;
  if (steps)
    out.push(
      "\n#### Many networks (one indexer, the spec map's networks busiest first; CPU as share of one core)\n",
      table(
        [
          'networks',
          'worst lag p99',
          'worst network',
          'indexer',
          'PostgreSQL (this database)',
          'PostgreSQL server',
          'simulators',
          'indexer peak RSS MB',
        ],
        steps.map((s) => {
          const share = (cpu: number | null) => (cpu === null ? null : round(cpu / s.seconds));
          const worst = s.networks.reduce((a, b) => (b.lagP99 > a.lagP99 ? b : a));
          return [
            s.count,
            s.worstLagP99,
            worst.network,
            share(s.cpuSeconds.indexer),
            share(s.cpuSeconds.postgres),
            share(s.cpuSeconds.postgresServer),
            share(s.cpuSeconds.simulators),
            s.indexerPeakRssMb,
          ];
        }),
      ),
    );
  if (all)
    out.push(
      `\n#### ${NETWORK_MIX.length} networks in one indexer process, each on its worker thread (CPU as share of one core; heap = V8 heap reserved + external at the end)\n`,
      table(
        ['network', 'block time s', 'blocks', 'lag p50', 'lag p99', 'lag max', 'worker CPU', 'worker heap MB'],
        all.networks.map((n) => [
          n.network,
          findProfile(n.network).blockTimeMs / 1000,
          n.blocks,
          n.lagP50,
          n.lagP99,
          n.lagMax,
          n.workerCpuShare,
          n.workerHeapMb,
        ]),
      ),
    );
  if (plans)
    out.push(
      "\n#### Hosted plans (short histories; Polygon's ends on a 12,000-log spam block): no stall\n",
      table(
        ['profile/plan', 'reached the head', 's', 'calls/block', 'warnings and errors logged'],
        Object.entries(plans).map(([plan, r]) => [
          plan,
          r.reachedHead ? 'yes' : 'no',
          r.seconds,
          r.callsPerBlock,
          Object.entries(r.complaints)
            .map(([m, n]) => `${n} × ${m}`)
            .join('; ')
            .replace(/\|/g, '\\|'),
        ]),
      ),
    );
  return `${out.join('\n')}\n`;
}
