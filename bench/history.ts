/**
 * `npm run bench -- history`: a network's history at its density, through a hosted node's round
 * trip, beside its floor. Per profile (base, polygon, arbitrum, mainnet), per
 * INDEXER_TRANSFERS (ops, known) and per round trip (0, 50, 200 ms), interleaved `repeats` times:
 *  - the bare fetch: the indexer's own fetchRange over the same blocks through the same round trip
 *    (headers, EntryPoint logs, token logs under known, receipts, transactions, the traces it
 *    needs), as many ranges in flight as the indexer's memory bound allows; nothing decoded or
 *    written. The floor: no indexer can be faster over this transport.
 *  - the backfill as the Procfile runs it (bench/procfile.ts, bench/chains.ts' startIndexer), into
 *    a fresh PostgreSQL database, from "indexer started" to indexed_block = the head: blocks/s,
 *    ops/s, the CPU of the indexer, of this database's PostgreSQL backends and of the simulator,
 *    and the calls it made by method (and what Alchemy bills for them).
 * The simulator runs in its own process with the history precomputed (simchain `precompute`:
 * served from cached JSON), one per profile and setting, each round trip asked for by URL path
 * (`/rtt/MS`); its CPU per block beside the indexer's says whether it could be the bound.
 *
 * Then the time to the head of every network of the spec's map: the blocks since its EntryPoint
 * v0.6 deployment (headEstimates.ts), at its profile's measured rate, and the RPC bill of that
 * history and of a day at the head.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { findNetworkByChainId, type EntryPointVersion } from '../shared/networks.js';
import { createLogger } from '../shared/log.js';
import { findProfile } from '../simchain/profiles.js';
import type { SimChainStats } from '../simchain/server.js';
import { DEFAULT_TUNING } from '../indexer/index.js';
import { LogRangeEstimator } from '../indexer/sync/fetchLogs.js';
import { fetchRange, type ChainSource } from '../indexer/sync/fetchRange.js';
import { PrefetchDepth } from '../indexer/sync/prefetchDepth.js';
import { RpcClient } from '../indexer/sync/rpcClient.js';
import { DatabaseCpu, connect, delta, reached, startIndexer, startSim, type IndexerProcess, type SimProcess } from './chains.js';
import { computeUnits, timeToHead, type MeasuredRate } from './headEstimates.js';
import { freshStore, median, round } from './indexer.js';
import { processCpuSeconds } from './processCpu.js';
import { buildProcfile } from './procfile.js';
import { CANONICAL_ENTRYPOINTS } from '../shared/chain/constants.js';

export type HistoryBenchOptions = {
  databaseUrl: string | undefined;
  /** BENCH_HISTORY_PROFILES (default base,polygon,arbitrum,mainnet). */
  profiles?: string[];
  /** BENCH_HISTORY_RTTS (default 0,50,200): round trips in ms. */
  rtts?: number[];
  /** BENCH_HISTORY_TRANSFERS (default ops,known). */
  transfers?: Array<'ops' | 'known'>;
  /** BENCH_HISTORY_BLOCKS (default 1000,300): blocks of an ops and of a known history (arbitrum's 8× as many: its blocks are that much thinner). */
  blocks?: { ops: number; known: number };
  /** BENCH_HISTORY_REPEATS (default 2 for base, 1 for the others): runs of each pair; figures are medians (of two: their mean). */
  repeats?: number;
};

type Transfers = 'ops' | 'known';

const DATABASE = 'opscan_bench_history';
/** The runs measured so far (bench/out is ignored by git). */
const PARTIAL_FILE = new URL('./out/history-partial.json', import.meta.url);
const log = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? 'warn', name: 'bench-history' });

type BareRun = { seconds: number; cpuSeconds: number; simulatorCpuSeconds: number };

/** The bare fetch of [fromBlock, head] through `url`: fetchRange, ranges in flight as the indexer's memory bound allows. */
async function bareFetch(
  sim: SimProcess,
  { url, fromBlock, head, transfers }: { url: string; fromBlock: number; head: number; transfers: Transfers },
): Promise<BareRun> {
  const tuning = DEFAULT_TUNING;
  const rpc = new RpcClient({ urls: [url], log, batchSize: tuning.rpcBatchSize, concurrency: tuning.rpcConcurrency });
  const entryPoints = new Map(Object.entries(CANONICAL_ENTRYPOINTS).map(([v, a]) => [a.toLowerCase(), v as EntryPointVersion]));
  const source: ChainSource = {
    rpc,
    chainId: sim.chainId,
    entryPoints,
    estimator: new LogRangeEstimator({
      initialRange: tuning.initialLogRange,
      maxRange: tuning.maxLogRange,
      targetLogs: tuning.targetLogsPerRange,
    }),
    traces: 'needed',
    traceSupport: {},
    ...(transfers === 'known'
      ? {
          tokenLogs: {
            estimator: new LogRangeEstimator({ initialRange: tuning.initialLogRange, maxRange: tuning.maxLogRange, targetLogs: 10_000 }),
            mayBeKnown: () => false,
          },
        }
      : {}),
  };
  const windowFrom = head - (findNetworkByChainId(sim.chainId)?.finalityDepth ?? 30) - tuning.reorgMarginBlocks;
  const depth = new PrefetchDepth({ min: tuning.prefetchRanges, max: tuning.maxPrefetchRanges, logsInFlight: tuning.prefetchLogsInFlight });
  const cpu0 = process.cpuUsage();
  const sim0 = processCpuSeconds(sim.pid) ?? 0;
  const started = performance.now();
  const queue: Array<Promise<unknown>> = [];
  let next = fromBlock;
  while (next <= head || queue.length > 0) {
    while (queue.length < depth.current && next <= head) {
      const toBlock = Math.min(head, next + source.estimator.size - 1);
      queue.push(
        fetchRange(source, { fromBlock: next, toBlock, windowFrom }).then((raw) =>
          depth.fetched(raw.entryPointLogs.length + (raw.tokenLogs?.length ?? 0)),
        ),
      );
      next = toBlock + 1;
    }
    const t0 = performance.now();
    await queue.shift();
    depth.waited(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    simulatorCpuSeconds: (processCpuSeconds(sim.pid) ?? 0) - sim0,
  };
}

type BackfillRun = {
  seconds: number;
  ops: number;
  cpuSeconds: { indexer: number; postgres: number; simulator: number };
  byMethod: Record<string, number>;
  complaints: Record<string, number>;
};

/** The indexer as the Procfile runs it, from `fromBlock` to the simulator's (fixed) head through `url`. */
async function backfill(
  { args, databaseUrl }: { args: string[]; databaseUrl: string },
  sim: SimProcess,
  { url, fromBlock, transfers }: { url: string; fromBlock: number; transfers: Transfers },
): Promise<BackfillRun> {
  const store = await freshStore(databaseUrl, DATABASE);
  const db = await connect(store);
  let indexer: IndexerProcess | null = null;
  try {
    indexer = startIndexer(args, store, [{ sim: { ...sim, url }, startBlock: fromBlock }], { INDEXER_TRANSFERS: transfers });
    await indexer.logged('indexer started');
    const databaseCpu = new DatabaseCpu(db, DATABASE);
    await databaseCpu.start();
    const before = { indexer: processCpuSeconds(indexer.pid) ?? 0, sim: processCpuSeconds(sim.pid) ?? 0, stats: await sim.stats() };
    const sampler = setInterval(() => void databaseCpu.sample().catch(() => undefined), 500);
    const started = performance.now();
    try {
      await reached(db, [{ chainId: sim.chainId, block: () => sim.head() }], indexer, 600_000);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuSeconds = {
      indexer: (processCpuSeconds(indexer.pid) ?? 0) - before.indexer,
      postgres: (await databaseCpu.sample(), databaseCpu.seconds()),
      simulator: (processCpuSeconds(sim.pid) ?? 0) - before.sim,
    };
    const stats: SimChainStats = await sim.stats();
    const ops = Number((await db.query<{ n: string }>('select count(*) as n from user_ops')).rows[0]!.n);
    return { seconds, ops, cpuSeconds, byMethod: delta(stats, before.stats).byMethod, complaints: Object.fromEntries(indexer.complaints) };
  } finally {
    await indexer?.stop();
    await db.end();
    await store.drop();
  }
}

export type HistoryFigures = {
  profile: string;
  transfers: Transfers;
  rttMs: number;
  blocks: number;
  repeats: number;
  seconds: number;
  blocksPerSecond: number;
  ops: number;
  opsPerSecond: number;
  bareFetchSeconds: number;
  /** Median of the per-repeat ratios backfill / bare fetch. */
  toBareFetch: number;
  /** Against the same profile and setting on loopback (RTT 0), medians. */
  toLoopback: number | null;
  cpuMsPerBlock: { indexer: number; postgres: number; simulator: number };
  /** The indexer's CPU against the simulator's for the same blocks: how many times faster the simulator serves than the indexer reads. */
  simulatorHeadroom: number;
  callsPerBlock: Record<string, number>;
  computeUnitsPerBlock: number;
  complaints: Record<string, number>;
};

export function historyOptionsFromEnv(databaseUrl: string | undefined): HistoryBenchOptions {
  const env = process.env;
  const list = (value: string | undefined) =>
    value
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const blocks = list(env.BENCH_HISTORY_BLOCKS)?.map(Number);
  return {
    databaseUrl,
    profiles: list(env.BENCH_HISTORY_PROFILES),
    rtts: list(env.BENCH_HISTORY_RTTS)?.map(Number),
    transfers: list(env.BENCH_HISTORY_TRANSFERS) as Transfers[] | undefined,
    blocks: blocks ? { ops: blocks[0]!, known: blocks[1] ?? blocks[0]! } : undefined,
    repeats: env.BENCH_HISTORY_REPEATS ? Number(env.BENCH_HISTORY_REPEATS) : undefined,
  };
}

export async function runHistoryBench(options: HistoryBenchOptions): Promise<Record<string, unknown>> {
  if (!options.databaseUrl) throw new Error('the history bench runs on PostgreSQL: set BENCH_DATABASE_URL (or DATABASE_URL)');
  const profiles = options.profiles ?? ['base', 'polygon', 'arbitrum', 'mainnet'];
  const rtts = options.rtts ?? [0, 50, 200];
  const settings = options.transfers ?? ['ops', 'known'];
  const procfile = buildProcfile();
  const args = procfile.args('indexer');
  const say = (text: string) => process.stderr.write(`[history] ${text}\n`);
  const runs: HistoryFigures[] = [];
  mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
  try {
    for (const name of profiles) {
      const profile = findProfile(name);
      const repeats = options.repeats ?? (name === 'base' ? 2 : 1);
      for (const transfers of settings) {
        const blocks = (options.blocks ?? { ops: 1000, known: 300 })[transfers] * (profile.blockTimeMs < 1000 ? 8 : 1);
        const head = profile.defaultFromBlock;
        const fromBlock = head - blocks + 1;
        say(`${name} INDEXER_TRANSFERS=${transfers}: precomputing ${blocks} blocks`);
        const sim = await startSim({
          profile: name,
          fromBlock,
          blocks,
          blockTimeMs: 0,
          precompute: transfers === 'known' ? 'all' : 'bundles',
        });
        try {
          const loopback: number[] = [];
          for (const rttMs of rtts) {
            const url = `${sim.url}/rtt/${rttMs}`;
            const pairs: Array<{ bare: BareRun; run: BackfillRun }> = [];
            for (let i = 0; i < repeats; i++) {
              say(`${name} ${transfers} RTT ${rttMs} ms, run ${i + 1}/${repeats}`);
              const bare = await bareFetch(sim, { url, fromBlock, head, transfers });
              const run = await backfill({ args, databaseUrl: options.databaseUrl }, sim, { url, fromBlock, transfers });
              pairs.push({ bare, run });
            }
            const seconds = median(pairs.map((p) => p.run.seconds));
            if (rttMs === 0) loopback.push(...pairs.map((p) => p.run.seconds));
            const last = pairs.at(-1)!.run;
            const perBlock = (s: number) => round((s * 1000) / blocks, 2);
            const cpu = (key: keyof BackfillRun['cpuSeconds']) => median(pairs.map((p) => p.run.cpuSeconds[key]));
            const callsPerBlock = Object.fromEntries(Object.entries(last.byMethod).map(([m, n]) => [m, round(n / blocks, 3)]));
            runs.push({
              profile: name,
              transfers,
              rttMs,
              blocks,
              repeats,
              seconds: round(seconds),
              blocksPerSecond: round(blocks / seconds, 1),
              ops: last.ops,
              opsPerSecond: Math.round(last.ops / seconds),
              bareFetchSeconds: round(median(pairs.map((p) => p.bare.seconds))),
              toBareFetch: round(median(pairs.map((p) => p.run.seconds / p.bare.seconds))),
              toLoopback: loopback.length > 0 ? round(seconds / median(loopback)) : null,
              cpuMsPerBlock: {
                indexer: perBlock(cpu('indexer')),
                postgres: perBlock(cpu('postgres')),
                simulator: perBlock(cpu('simulator')),
              },
              simulatorHeadroom: round(cpu('indexer') / Math.max(cpu('simulator'), 1e-3), 1),
              callsPerBlock,
              computeUnitsPerBlock: round(computeUnits(last.byMethod) / blocks, 1),
              complaints: last.complaints,
            });
            // Written as it goes: a long run cut short still leaves what it measured.
            writeFileSync(PARTIAL_FILE, JSON.stringify({ date: new Date().toISOString(), runs }, null, 1));
            const r = runs.at(-1)!;
            say(
              `  ${r.blocksPerSecond} blocks/s, ${r.opsPerSecond} ops/s, ${r.toBareFetch}× bare fetch, ${r.toLoopback}× loopback, simulator headroom ${r.simulatorHeadroom}×`,
            );
          }
        } finally {
          await sim.stop();
        }
      }
    }
  } finally {
    procfile.cleanup();
  }
  const rates: MeasuredRate[] = runs.map((r) => ({
    profile: r.profile,
    transfers: r.transfers,
    rttMs: r.rttMs,
    blocksPerSecond: r.blocksPerSecond,
    callsPerBlock: r.callsPerBlock,
  }));
  const find = (profile: string, transfers: Transfers, rttMs: number) =>
    runs.find((r) => r.profile === profile && r.transfers === transfers && r.rttMs === rttMs);
  const base = (rttMs: number) => find('base', 'ops', rttMs);
  const summary: Record<string, number | boolean | null> = {};
  for (const r of runs) {
    const key = `${r.profile}.${r.transfers}.rtt${r.rttMs}`;
    summary[`${key}.blocksPerSecond`] = r.blocksPerSecond;
    summary[`${key}.toBareFetch`] = r.toBareFetch;
    summary[`${key}.toLoopback`] = r.toLoopback;
    summary[`${key}.simulatorHeadroom`] = r.simulatorHeadroom;
  }
  // The aims, on Base history under INDEXER_TRANSFERS=ops: at a 200 ms round trip within 1.3× of
  // loopback, within 2× of the bare fetch at every round trip, at least 500 blocks/s at 50 ms, and
  // the simulator at least 5× faster than the indexer.
  const aims = {
    rtt200WithinLoopback1_3: base(200)?.toLoopback === undefined ? null : base(200)!.toLoopback! <= 1.3,
    within2xBareFetch: ['0', '50', '200'].every((rtt) => (base(Number(rtt))?.toBareFetch ?? Infinity) <= 2),
    rtt50AtLeast500BlocksPerSecond: base(50) ? base(50)!.blocksPerSecond >= 500 : null,
    simulatorAtLeast5xFaster: runs.every((r) => r.simulatorHeadroom >= 5),
  };
  for (const [aim, met] of Object.entries(aims)) summary[`aim.${aim}`] = met;
  return { summary, aims, runs, timeToHead: timeToHead(rates) };
}
