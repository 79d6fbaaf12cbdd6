/**
 * `npm run bench [-- part…]`: runs every benchmark part (or the named ones), prints one table of
 * their figures and writes everything to bench/results.json (machine, commit, date, each part's
 * figures and ratios). Parts use PostgreSQL when BENCH_DATABASE_URL (or DATABASE_URL) is set, else
 * PGlite. A new part = one entry in PARTS; a part returning `{ summary }` (a flat record of its
 * headline figures) has that printed, otherwise every number it returns.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { DEFAULT_API_BENCH, runApiBench } from './api.js';
import { runWebhookBench } from './webhooks.js';
import { runIndexerBench } from './indexer.js';
import { runPeerBench } from './peer.js';
import { runFreshnessBench } from './freshness.js';
import { chainsOptionsFromEnv, runChainsBench } from './chains.js';
import { historyOptionsFromEnv, runHistoryBench } from './history.js';
import { runStorageBench } from './storage.js';
import { runStartupBench } from './startup.js';

const databaseUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || undefined;

const PARTS: Record<string, () => Promise<unknown>> = {
  api: () =>
    runApiBench({
      databaseUrl,
      redisUrl: process.env.REDIS_URL || undefined,
      // BENCH_API_OPS=100000,1000000 (ascending): the sizes measured one after the other.
      sizes: process.env.BENCH_API_OPS ? process.env.BENCH_API_OPS.split(',').map(Number) : DEFAULT_API_BENCH.sizes,
      // BENCH_API_ONLY=RPC: only the scenarios whose name includes it (and the bare routes).
      only: process.env.BENCH_API_ONLY || undefined,
    }),
  webhooks: () => runWebhookBench({ databaseUrl }),
  // BENCH_INDEXER_OPS (default 20000): devnet ops generated, then backfilled and compared with a bare fetch.
  indexer: () => runIndexerBench({ databaseUrl, ops: Number(process.env.BENCH_INDEXER_OPS ?? 20_000) }),
  // A Subsquid processor (bench/peer) against opscan's backfill and the bare fetch (PostgreSQL only);
  // BENCH_PEER_OPS (default 10000), BENCH_PEER_REPEATS (default 3), more settings in bench/peer.ts.
  peer: () =>
    runPeerBench({
      databaseUrl,
      ops: Number(process.env.BENCH_PEER_OPS ?? 10_000),
      repeats: Number(process.env.BENCH_PEER_REPEATS ?? 3),
    }),
  // BENCH_FRESHNESS_OPS (default 60): ops timed per block cadence and per way of following the head.
  freshness: () =>
    runFreshnessBench({
      databaseUrl,
      ...(process.env.BENCH_FRESHNESS_OPS ? { opsPerCadence: Number(process.env.BENCH_FRESHNESS_OPS) } : {}),
    }),
  // The chain simulator's networks (PostgreSQL only); sizes from BENCH_CHAINS_* (bench/chains.ts).
  chains: () => runChainsBench(chainsOptionsFromEnv(databaseUrl)),
  // Time to the banner of `npm start`: first and second start, both demo modes; BENCH_STARTUP_RUNS (default 3).
  startup: () => runStartupBench({ runs: Number(process.env.BENCH_STARTUP_RUNS ?? 3) }),
  // A network's history at its density through 0, 50 and 200 ms RTT beside its bare fetch, and the
  // time to the head of every network (PostgreSQL only); sizes from BENCH_HISTORY_* (bench/history.ts).
  history: () => runHistoryBench(historyOptionsFromEnv(databaseUrl)),
  // Bytes per op per table and index, the previous release against this tree (PostgreSQL only);
  // BENCH_STORAGE_OPS (default 300,1000): sizes in ops; BENCH_STORAGE_CHAIN: realistic (default) or a
  // chain simulator profile (base, …); BENCH_STORAGE_PREVIOUS: the previous release's commit.
  storage: () =>
    runStorageBench({
      databaseUrl,
      sizes: process.env.BENCH_STORAGE_OPS?.split(',').map(Number),
      previousCommit: process.env.BENCH_STORAGE_PREVIOUS || undefined,
      chain: process.env.BENCH_STORAGE_CHAIN || undefined,
    }),
};

const RESULTS_FILE = new URL('./results.json', import.meta.url);

/** Every number in `value`, keyed by its path (arrays are left out: they are samples, not figures). */
function numbersOf(value: unknown, path = ''): Array<[string, number]> {
  if (typeof value === 'number') return [[path, value]];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => numbersOf(v, path ? `${path}.${k}` : k));
}

function commitOf(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in PARTS));
if (unknown.length > 0) {
  console.error(`unknown bench part(s): ${unknown.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}
/** Parts measured before and not run now are kept (each with the date and commit it was measured at). */
const earlier = existsSync(RESULTS_FILE)
  ? (JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as {
      date?: string;
      commit?: string;
      parts?: Record<string, { seconds: number; result: unknown; date?: string; commit?: string }>;
    })
  : {};
const report = {
  date: new Date().toISOString(),
  commit: commitOf(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: os.loadavg(),
  },
  store: databaseUrl ? 'postgres' : 'pglite',
  parts: Object.fromEntries(
    Object.entries(earlier.parts ?? {}).map(([name, part]) => [name, { date: earlier.date, commit: earlier.commit, ...part }]),
  ) as Record<string, { seconds: number; result: unknown; date?: string; commit?: string }>,
};
const table: Array<{ part: string; figure: string; value: number }> = [];
for (const name of wanted.length > 0 ? wanted : Object.keys(PARTS)) {
  const started = Date.now();
  const result = await PARTS[name]!();
  report.parts[name] = { seconds: (Date.now() - started) / 1000, result, date: report.date, commit: report.commit };
  const summary = (result as { summary?: unknown } | null)?.summary;
  for (const [figure, value] of numbersOf(summary ?? result)) table.push({ part: name, figure, value });
  // Written after every part, so a long run that fails late keeps what it measured.
  writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
}
console.table(table);
console.log(
  `machine: ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryGiB} GiB, node ${report.machine.node}; commit ${report.commit}; full figures in bench/results.json`,
);
process.exit(0);
