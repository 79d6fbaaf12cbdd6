/**
 * Indexer benchmark: backfill time and memory on devnet traffic, against a bare fetch of the same
 * data, on a local node and through a proxy adding a hosted node's round trip.
 *
 * One run: start the devnet and generate the ops (real EntryPoints on anvil); then, repeated
 * `repeats` times and interleaved so that a noisy moment hits both sides of a ratio alike:
 *  - the bare fetch: the same eth_getLogs ranges, and the receipt and transaction of every bundle
 *    transaction (what decoding needs: logs, then calldata), in JSON-RPC batches, ranges fetched
 *    ahead the same way; nothing decoded or written;
 *  - the backfill as the Procfile runs it: its `indexer:` command (node flags included) on this
 *    tree compiled by `tsc -p tsconfig.build.json` into a scratch folder, in its own process, with
 *    default settings (INDEXER_TRACES=needed), into a fresh database, timed from its "indexer
 *    started" line to its last batch at the head; its peak RSS is the kernel's high-water mark
 *    (VmHWM), and its resident set after each batch is compared between the range's two halves
 *    (memory growing with the length of a range would show there);
 *  - both again through a proxy that holds every request REMOTE_RTT_MS (a hosted node): on
 *    loopback the node answers almost for free, so that pair shows whether the backfill is bounded
 *    by the fetch once fetching costs what it costs in production; and through FAR_RTT_MS (a
 *    provider an ocean away), where the ranges in flight must hide the latency (aim: ≤ 1.3× the
 *    loopback backfill).
 * Each figure is the median of its runs, each ratio the median of the per-repeat ratios.
 *
 * Beside the times, where the CPU went (Linux, bench/processCpu.ts): the indexer's, the whole
 * PostgreSQL server's and the node's over each backfill, this process's and the node's over each
 * bare fetch. On a machine of few cores these bound the ratio: `backfillCpuBoundToBareFetch` is the
 * backfill's CPU spread over every core against the bare fetch's time (no schedule of that work can
 * do better here), `indexerBusyShare` how much of the backfill the indexer's one thread was running.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/log.js';
import { generate, startDevnet, type Devnet } from '../devnet/index.js';
import { DEFAULT_TUNING, type IndexerTuning } from '../indexer/index.js';
import { RpcClient } from '../indexer/sync/rpcClient.js';
import { LogRangeEstimator, fetchLogs } from '../indexer/sync/fetchLogs.js';
import { PrefetchDepth } from '../indexer/sync/prefetchDepth.js';
import { parentPid, postgresCpuSeconds, processCpuSeconds } from './processCpu.js';
import { ROOT, buildProcfile } from './procfile.js';
import { TOPICS } from '../shared/chain/constants.js';

export type IndexerBenchOptions = { ops: number; databaseUrl?: string; repeats?: number };

/** The devnet funds each generate() call's new accounts in one block: generate in chunks. */
const GENERATE_CHUNK_OPS = 2_000;

/** Round trip added per HTTP request in the "remote node" runs. */
const REMOTE_RTT_MS = 20;
/** And in the "far node" runs: a hosted provider across an ocean (the peers' latency benchmarks use 200 ms). */
const FAR_RTT_MS = 200;

const log = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? 'warn', name: 'bench-indexer' });

export async function generateOps(devnet: Devnet, ops: number): Promise<void> {
  for (let done = 0, seed = 1; done < ops; done += GENERATE_CHUNK_OPS, seed++) {
    await generate(devnet, { ops: Math.min(GENERATE_CHUNK_OPS, ops - done), days: 1, seed });
  }
}

/** The bare fetch: same transport, ranges and prefetch depth; logs, receipts and transactions; no decoding, no writes. */
export async function bareFetch(
  rpcUrl: string,
  { entryPoints, head, nodePid }: { entryPoints: string[]; head: number; nodePid: number },
  tuning: IndexerTuning,
): Promise<BareFetchRun> {
  const rpc = new RpcClient({ urls: [rpcUrl], log, batchSize: tuning.rpcBatchSize, concurrency: tuning.rpcConcurrency });
  const estimator = new LogRangeEstimator({
    initialRange: tuning.initialLogRange,
    maxRange: tuning.maxLogRange,
    targetLogs: tuning.targetLogsPerRange,
  });
  const started = performance.now();
  const cpuAtStart = { fetcher: process.cpuUsage(), node: processCpuSeconds(nodePid) };
  const fetchRange = async (fromBlock: number, toBlock: number): Promise<number> => {
    const logs = await fetchLogs(rpc, { fromBlock, toBlock, addresses: entryPoints }, estimator);
    depth.fetched(logs.length);
    const txs = [...new Set(logs.filter((l) => l.topics[0] === TOPICS.beforeExecution).map((l) => l.transactionHash))];
    const answers = await rpc.batch<{ hash?: string; logs?: unknown }>(
      txs.flatMap((h) => [
        { method: 'eth_getTransactionReceipt', params: [h] },
        { method: 'eth_getTransactionByHash', params: [h] },
      ]),
      (r) => !!r && (Array.isArray(r.logs) || typeof r.hash === 'string'),
    );
    return answers.length / 2;
  };
  // As many ranges in flight as the indexer's own rule allows (PrefetchDepth: it grows while the
  // consumer waits, up to the memory bound); here the consumer always waits.
  const depth = new PrefetchDepth({ min: tuning.prefetchRanges, max: tuning.maxPrefetchRanges, logsInFlight: tuning.prefetchLogsInFlight });
  const queue: Array<Promise<number>> = [];
  let next = 0;
  let transactions = 0;
  while (next <= head || queue.length > 0) {
    while (queue.length < depth.current && next <= head) {
      const to = Math.min(head, next + estimator.size - 1);
      queue.push(fetchRange(next, to));
      next = to + 1;
    }
    const t0 = performance.now();
    transactions += await queue.shift()!;
    depth.waited(performance.now() - t0);
  }
  const fetcher = process.cpuUsage(cpuAtStart.fetcher);
  return {
    seconds: (performance.now() - started) / 1000,
    transactions,
    cpuSeconds: { fetcher: (fetcher.user + fetcher.system) / 1e6, node: since(cpuAtStart.node, processCpuSeconds(nodePid)) },
  };
}

export type BareFetchRun = {
  seconds: number;
  transactions: number;
  /** This process's CPU (it only fetches; on the latency proxy's runs it also relays) and the node's. */
  cpuSeconds: { fetcher: number; node: number | null };
};

export const since = (start: number | null, end: number | null): number | null => (start === null || end === null ? null : end - start);

/** What went through a latency proxy since its last `reset()`. */
export type ProxyTraffic = {
  /** HTTP requests, and the JSON-RPC calls they carried by method. */
  requests: number;
  calls: Record<string, number>;
  /** The most requests held or forwarded at once. */
  maxInFlight: number;
  /**
   * Seconds during which at least one request was in flight: divided by the round trip, the round
   * trips the client waited for one after the other (the critical path), whatever overlapped beside them.
   */
  busySeconds: number;
};

/** A loopback proxy that holds every request for `delayMs` before forwarding it, and counts what passes. */
export async function startLatencyProxy(
  upstream: string,
  delayMs: number,
): Promise<{ url: string; traffic(): ProxyTraffic; reset(): void; stop(): Promise<void> }> {
  let traffic: ProxyTraffic = { requests: 0, calls: {}, maxInFlight: 0, busySeconds: 0 };
  let inFlight = 0;
  let busySince = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      traffic.requests++;
      if (inFlight++ === 0) busySince = performance.now();
      traffic.maxInFlight = Math.max(traffic.maxInFlight, inFlight);
      try {
        const parsed = JSON.parse(body.toString()) as { method?: string } | Array<{ method?: string }>;
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
          const method = call.method ?? '?';
          traffic.calls[method] = (traffic.calls[method] ?? 0) + 1;
        }
      } catch {
        // Not JSON: forwarded as it is, counted as a request only.
      }
      res.once('close', () => {
        if (--inFlight === 0) traffic.busySeconds += (performance.now() - busySince) / 1000;
      });
      setTimeout(() => {
        fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
          .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
          .catch(() => res.destroy());
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    traffic: () => ({ ...traffic, calls: { ...traffic.calls } }),
    reset() {
      traffic = { requests: 0, calls: {}, maxInFlight: inFlight, busySeconds: 0 };
      busySince = performance.now();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Store = {
  env: Record<string, string>;
  /** The PostgreSQL server's postmaster when it is a process of this machine (its CPU is read); null for PGlite. */
  postmasterPid: number | null;
  countUserOps(): Promise<number>;
  countTransfers(): Promise<number>;
  drop(): Promise<void>;
};

/** A fresh, migrated database for one backfill: a PostgreSQL database, or a PGlite folder. */
export async function freshStore(databaseUrl: string | undefined, name: string): Promise<Store> {
  if (!databaseUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), 'opscan-bench-'));
    const db = await createDb({ dataDir });
    await migrate(db);
    await db.close();
    const count = async (table: string): Promise<number> => {
      const reader = await createDb({ dataDir });
      try {
        return Number((await reader.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);
      } finally {
        await reader.close();
      }
    };
    return {
      env: { DATA_DIR: dataDir },
      postmasterPid: null,
      countUserOps: () => count('user_ops'),
      countTransfers: () => count('token_transfers'),
      drop: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
    };
  }
  const database = await emptyDatabase(databaseUrl, name);
  const db = await createDb({ databaseUrl: database.url, max: 2 });
  await migrate(db);
  const backend = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  return {
    env: { DATABASE_URL: database.url },
    postmasterPid: parentPid(backend),
    countUserOps: async () => Number((await db.query<{ n: string }>('select count(*) as n from user_ops')).rows[0]!.n),
    countTransfers: async () => Number((await db.query<{ n: string }>('select count(*) as n from token_transfers')).rows[0]!.n),
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

/** An empty database `name` on the server of `databaseUrl` (dropped first if it exists). */
export async function emptyDatabase(databaseUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** A live process's resident set (VmRSS) or its peak so far (VmHWM), in MB (Linux); null elsewhere. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmHWM'): number | null {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

export type BackfillRun = {
  seconds: number;
  userOps: number;
  /** token_transfers rows stored (ops' transfers, and under INDEXER_TRANSFERS=known plain transactions'). */
  transfers: number;
  peakRssMb: number | null;
  startRssMb: number | null;
  /**
   * The largest resident set seen after a batch, in the first and in the second half of the range:
   * memory that grew with the length of the range would show as a second half above the first.
   */
  rssByHalfMb: [number | null, number | null];
  /** From "indexer started" to the end: the indexer's, the whole PostgreSQL server's, the node's. */
  cpuSeconds: { indexer: number | null; postgres: number | null; node: number | null };
  /** The timed span on the monotonic clock (µs), the clock of `--cpu-prof`'s samples. */
  monotonicMicros: [number, number];
};

/**
 * `indexer/main.ts` in its own process with the production defaults (only the chain, the store and
 * a debug log level — for the per-batch line that tells where it stands, and under known the
 * transfer backfill's line that ends the run — are set), until its last batch reaches `head`.
 */
export async function backfill(
  command: string[],
  rpcUrl: string,
  databaseUrl: string | undefined,
  {
    head,
    transfers,
    nodePid,
    env: extraEnv = {},
    cpuProfileDir,
  }: {
    head: number;
    transfers: 'ops' | 'known';
    nodePid: number;
    /** Settings beside the defaults (an A/B of one setting). */
    env?: Record<string, string>;
    /** Run under `--cpu-prof` (every thread writes its profile here) and stop it with SIGTERM so that they are written. */
    cpuProfileDir?: string;
  },
): Promise<BackfillRun> {
  const store = await freshStore(databaseUrl, `opscan_bench_indexer_${process.pid}`);
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...store.env,
      NETWORKS: 'devnet',
      RPC_URL_DEVNET: rpcUrl,
      START_BLOCK_DEVNET: '0',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
      INDEXER_TRANSFERS: transfers,
      ...extraEnv,
    };
    for (const key of ['INDEXER_TRACES', 'INDEXER_POLL_INTERVAL_MS', 'METRICS_PORT']) delete env[key];
    if (!databaseUrl) delete env.DATABASE_URL;
    const args = cpuProfileDir ? [...command.slice(0, -1), '--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`, command.at(-1)!] : command;
    const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const run = await new Promise<Omit<BackfillRun, 'userOps' | 'transfers'>>((resolve, reject) => {
      let startedAt = 0;
      let startRssMb: number | null = null;
      const cpuNow = () => ({
        indexer: processCpuSeconds(child.pid!),
        postgres: store.postmasterPid === null ? null : postgresCpuSeconds(store.postmasterPid),
        node: processCpuSeconds(nodePid),
      });
      let cpuAtStart = cpuNow();
      const halves: [number | null, number | null] = [null, null];
      const monotonicMicros: [number, number] = [0, 0];
      let buffered = '';
      child.once('exit', (code) => reject(new Error(`the indexer exited (${code}) before reaching block ${head}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          if (!line.startsWith('{')) continue;
          const entry = JSON.parse(line) as { msg?: string; toBlock?: number };
          const done = () => {
            const seconds = (performance.now() - startedAt) / 1000;
            monotonicMicros[1] = Number(process.hrtime.bigint() / 1000n);
            const cpu = cpuNow();
            resolve({
              seconds,
              peakRssMb: rssMb(child.pid!),
              startRssMb,
              monotonicMicros,
              rssByHalfMb: halves,
              cpuSeconds: {
                indexer: since(cpuAtStart.indexer, cpu.indexer),
                postgres: since(cpuAtStart.postgres, cpu.postgres),
                node: since(cpuAtStart.node, cpu.node),
              },
            });
          };
          // Under known the pass ends with the backfill of the addresses that became known on the way.
          if (entry.msg === 'token transfers of newly known addresses backfilled' && startedAt > 0) done();
          if (entry.msg === 'indexer started') {
            startedAt = performance.now();
            monotonicMicros[0] = Number(process.hrtime.bigint() / 1000n);
            startRssMb = rssMb(child.pid!);
            cpuAtStart = cpuNow();
          } else if (entry.msg === 'batch written' && startedAt > 0) {
            const half = (entry.toBlock ?? 0) <= head / 2 ? 0 : 1;
            const now = rssMb(child.pid!, 'VmRSS');
            if (now !== null) halves[half] = Math.max(halves[half] ?? 0, now);
            if (entry.toBlock === head && transfers === 'ops') done();
          }
        }
      });
    }).finally(() => {
      child.removeAllListeners('exit');
      child.kill(cpuProfileDir ? 'SIGTERM' : 'SIGKILL');
    });
    await new Promise((resolve) => (child.exitCode === null && child.signalCode === null ? child.once('exit', resolve) : resolve(null)));
    return { ...run, userOps: await store.countUserOps(), transfers: await store.countTransfers() };
  } finally {
    await store.drop();
  }
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
export const round = (n: number, digits = 2): number => Number(n.toFixed(digits));
const maxOf = (values: Array<number | null>): number | null => {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? Math.max(...known) : null;
};

export async function runIndexerBench(options: IndexerBenchOptions): Promise<Record<string, unknown>> {
  // BENCH_INDEXER_REPEATS (default 3): runs of each measurement; figures are their medians.
  const repeats = options.repeats ?? Number(process.env.BENCH_INDEXER_REPEATS ?? 3);
  const procfile = buildProcfile();
  const indexer = { args: procfile.args('indexer') };
  const devnet = await startDevnet();
  const proxy = await startLatencyProxy(devnet.rpcUrl, REMOTE_RTT_MS / 2);
  const farProxy = await startLatencyProxy(devnet.rpcUrl, FAR_RTT_MS / 2);
  try {
    const generatedAt = performance.now();
    await generateOps(devnet, options.ops);
    const generateSeconds = (performance.now() - generatedAt) / 1000;
    const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
    const entryPoints = Object.values(devnet.truth.entryPoints);
    const ops = devnet.truth.userOps.length;

    const runs = {
      bare: [] as BareFetchRun[],
      backfill: [] as BackfillRun[],
      remoteBare: [] as BareFetchRun[],
      remoteBackfill: [] as BackfillRun[],
      opsOnly: [] as BackfillRun[],
      remoteOpsOnly: [] as BackfillRun[],
      farBare: [] as BareFetchRun[],
      farBackfill: [] as BackfillRun[],
    };
    // The default (INDEXER_TRANSFERS=known) against ops: what reading the chain's token logs costs.
    const chain = { entryPoints, head, nodePid: devnet.pid };
    const known = { head, transfers: 'known' as const, nodePid: devnet.pid };
    const opsOnly = { head, transfers: 'ops' as const, nodePid: devnet.pid };
    for (let i = 0; i < repeats; i++) {
      runs.bare.push(await bareFetch(devnet.rpcUrl, chain, DEFAULT_TUNING));
      runs.backfill.push(await backfill(indexer.args, devnet.rpcUrl, options.databaseUrl, known));
      runs.opsOnly.push(await backfill(indexer.args, devnet.rpcUrl, options.databaseUrl, opsOnly));
      runs.remoteBare.push(await bareFetch(proxy.url, chain, DEFAULT_TUNING));
      runs.remoteBackfill.push(await backfill(indexer.args, proxy.url, options.databaseUrl, known));
      runs.remoteOpsOnly.push(await backfill(indexer.args, proxy.url, options.databaseUrl, opsOnly));
      runs.farBare.push(await bareFetch(farProxy.url, chain, DEFAULT_TUNING));
      runs.farBackfill.push(await backfill(indexer.args, farProxy.url, options.databaseUrl, known));
    }
    for (const run of [...runs.backfill, ...runs.remoteBackfill, ...runs.opsOnly, ...runs.remoteOpsOnly, ...runs.farBackfill])
      if (run.userOps !== ops) throw new Error(`indexed ${run.userOps} of ${ops} ops`);

    const seconds = (list: Array<{ seconds: number }>) => list.map((r) => r.seconds);
    const ratio = (backfills: BackfillRun[], bares: BareFetchRun[]) =>
      round(median(backfills.map((r, i) => r.seconds / bares[i]!.seconds)));
    const medianOf = (values: Array<number | null>): number | null => {
      const known = values.filter((v): v is number => v !== null);
      return known.length === values.length ? round(median(known)) : null;
    };
    // Where the local runs' CPU went (the proxy's runs are left out: the relaying is nobody's work).
    const cores = availableParallelism();
    const backfillCpu = {
      indexer: medianOf(runs.backfill.map((r) => r.cpuSeconds.indexer)),
      postgres: medianOf(runs.backfill.map((r) => r.cpuSeconds.postgres)),
      node: medianOf(runs.backfill.map((r) => r.cpuSeconds.node)),
    };
    const bareFetchCpu = {
      fetcher: medianOf(runs.bare.map((r) => r.cpuSeconds.fetcher)),
      node: medianOf(runs.bare.map((r) => r.cpuSeconds.node)),
    };
    // The backfill's CPU spread over every core, against the bare fetch's time: the ratio no
    // schedule of the same work could beat on this machine (null where a process could not be read).
    const cpuBound = medianOf(
      runs.backfill.map(({ cpuSeconds: { indexer, postgres, node } }, i) =>
        indexer === null || postgres === null || node === null ? null : (indexer + postgres + node) / cores / runs.bare[i]!.seconds,
      ),
    );
    // The share of the backfill's time the indexer's one thread was on a core: near 1, it is the bound.
    const indexerBusy = medianOf(runs.backfill.map((r) => (r.cpuSeconds.indexer === null ? null : r.cpuSeconds.indexer / r.seconds)));
    const peaks = [...runs.backfill, ...runs.remoteBackfill].map((r) => r.peakRssMb).filter((mb): mb is number => mb !== null);
    const summary = {
      ops,
      bareFetchSeconds: round(median(seconds(runs.bare))),
      backfillSeconds: round(median(seconds(runs.backfill))),
      backfillToBareFetch: ratio(runs.backfill, runs.bare),
      opsPerSecond: Math.round(ops / median(seconds(runs.backfill))),
      remoteBareFetchSeconds: round(median(seconds(runs.remoteBare))),
      remoteBackfillSeconds: round(median(seconds(runs.remoteBackfill))),
      remoteBackfillToBareFetch: ratio(runs.remoteBackfill, runs.remoteBare),
      // Through 200 ms: against its bare fetch, and against the loopback backfill (aim ≤ 1.3).
      farBareFetchSeconds: round(median(seconds(runs.farBare))),
      farBackfillSeconds: round(median(seconds(runs.farBackfill))),
      farBackfillToBareFetch: ratio(runs.farBackfill, runs.farBare),
      farBackfillToLoopback: round(median(runs.farBackfill.map((r, i) => r.seconds / runs.backfill[i]!.seconds))),
      cores,
      backfillCpuSeconds: backfillCpu,
      bareFetchCpuSeconds: bareFetchCpu,
      backfillCpuBoundToBareFetch: cpuBound,
      indexerBusyShare: indexerBusy,
      peakRssMb: peaks.length > 0 ? Math.max(...peaks) : null,
      // Largest resident set after a batch in each half of the range (all backfills): flat = bounded by batch size.
      rssFirstHalfMb: maxOf([...runs.backfill, ...runs.remoteBackfill].map((r) => r.rssByHalfMb[0])),
      rssSecondHalfMb: maxOf([...runs.backfill, ...runs.remoteBackfill].map((r) => r.rssByHalfMb[1])),
      // INDEXER_TRANSFERS: the default (known, above) against ops, time and token_transfers rows per op.
      opsOnlyBackfillSeconds: round(median(seconds(runs.opsOnly))),
      remoteOpsOnlyBackfillSeconds: round(median(seconds(runs.remoteOpsOnly))),
      knownToOpsOnly: round(median(runs.backfill.map((r, i) => r.seconds / runs.opsOnly[i]!.seconds))),
      remoteKnownToOpsOnly: round(median(runs.remoteBackfill.map((r, i) => r.seconds / runs.remoteOpsOnly[i]!.seconds))),
      transferRowsPerOp: round(runs.backfill[0]!.transfers / ops, 3),
      opsOnlyTransferRowsPerOp: round(runs.opsOnly[0]!.transfers / ops, 3),
    };
    return {
      summary,
      store: options.databaseUrl ? 'postgres' : 'pglite',
      traces: 'needed (default)',
      transfers: 'known (default) against ops',
      indexerCommand: `node ${indexer.args.slice(0, -1).join(' ')} dist/indexer/main.js`,
      remoteRttMs: REMOTE_RTT_MS,
      farRttMs: FAR_RTT_MS,
      repeats,
      bundles: devnet.truth.bundles.length,
      blocks: head + 1,
      generateSeconds: round(generateSeconds, 1),
      runs: {
        bareFetchSeconds: seconds(runs.bare).map((s) => round(s)),
        backfillSeconds: seconds(runs.backfill).map((s) => round(s)),
        remoteBareFetchSeconds: seconds(runs.remoteBare).map((s) => round(s)),
        remoteBackfillSeconds: seconds(runs.remoteBackfill).map((s) => round(s)),
        opsOnlyBackfillSeconds: seconds(runs.opsOnly).map((s) => round(s)),
        remoteOpsOnlyBackfillSeconds: seconds(runs.remoteOpsOnly).map((s) => round(s)),
        farBareFetchSeconds: seconds(runs.farBare).map((s) => round(s)),
        farBackfillSeconds: seconds(runs.farBackfill).map((s) => round(s)),
        peakRssMb: [...runs.backfill, ...runs.remoteBackfill].map((r) => r.peakRssMb),
        rssAtStartMb: [...runs.backfill, ...runs.remoteBackfill].map((r) => r.startRssMb),
      },
    };
  } finally {
    await proxy.stop();
    await farProxy.stop();
    await devnet.stop();
    procfile.cleanup();
  }
}
