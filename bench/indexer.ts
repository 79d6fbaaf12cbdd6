/**
 * Indexer benchmark: backfill throughput on devnet traffic, against a bare fetch of the same range.
 *
 * One run: start the devnet and generate the ops (real EntryPoints on anvil); then, over the same
 * block range, (1) a bare fetch — the same eth_getLogs ranges and bundle-transaction receipts in
 * JSON-RPC batches, ranges fetched ahead the same way, nothing decoded or written; (2) the
 * indexer's backfill into a fresh database (decode, persist, aggregates, outbox, cursor) without
 * op traces; (3) the same with op traces (debug_traceTransaction per bundle transaction); (4) the
 * bare fetch again (the ratio uses the mean of both bare runs). Then (5, 6) the bare fetch and the
 * backfill again through a proxy adding a network round trip (REMOTE_RTT_MS) to every request, as
 * a hosted node would: on loopback the node answers almost for free, so the first ratio measures
 * the cost of decoding and writing rather than the overlap with fetching.
 */
import { createDb, type Db } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/log.js';
import { indexerEnvSchema, loadConfig } from '../shared/config.js';
import { generate, startDevnet, type Devnet } from '../devnet/index.js';
import { DEFAULT_TUNING, startIndexer, type IndexerTuning } from '../indexer/index.js';
import { RpcClient } from '../indexer/sync/rpcClient.js';
import { LogRangeEstimator, fetchLogs } from '../indexer/sync/fetchLogs.js';
import { TOPICS } from '../indexer/decode/abi.js';
import type { RpcReceipt } from '../indexer/decode/chainTypes.js';
import pg from 'pg';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type IndexerBenchOptions = { ops: number; databaseUrl?: string };

/** The devnet funds each generate() call's new accounts in one block: generate in chunks. */
const GENERATE_CHUNK_OPS = 2_000;

/** Round trip added per HTTP request in the "remote node" runs. */
const REMOTE_RTT_MS = 20;

const log = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? 'warn', name: 'bench-indexer' });

async function generateOps(devnet: Devnet, ops: number): Promise<void> {
  for (let done = 0, seed = 1; done < ops; done += GENERATE_CHUNK_OPS, seed++) {
    await generate(devnet, { ops: Math.min(GENERATE_CHUNK_OPS, ops - done), days: 1, seed });
  }
}

/** The bare fetch: same transport, same ranges and prefetch depth; no decoding, no writes. */
async function bareFetch(rpcUrl: string, entryPoints: string[], head: number, tuning: IndexerTuning): Promise<{ seconds: number; receipts: number }> {
  const rpc = new RpcClient({ urls: [rpcUrl], log, batchSize: tuning.rpcBatchSize, concurrency: tuning.rpcConcurrency });
  const estimator = new LogRangeEstimator({ initialRange: tuning.initialLogRange, maxRange: tuning.maxLogRange, targetLogs: tuning.targetLogsPerRange });
  const started = performance.now();
  const fetchRange = async (fromBlock: number, toBlock: number): Promise<number> => {
    const logs = await fetchLogs(rpc, { fromBlock, toBlock, addresses: entryPoints }, estimator);
    const txs = [...new Set(logs.filter((l) => l.topics[0] === TOPICS.beforeExecution).map((l) => l.transactionHash))];
    const receipts = await rpc.batch<RpcReceipt>(txs.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })), (r) => !!r && Array.isArray(r.logs));
    return receipts.length;
  };
  const queue: Array<Promise<number>> = [];
  let next = 0;
  let receipts = 0;
  while (next <= head || queue.length > 0) {
    while (queue.length < tuning.prefetchRanges && next <= head) {
      const to = Math.min(head, next + estimator.size - 1);
      queue.push(fetchRange(next, to));
      next = to + 1;
    }
    receipts += await queue.shift()!;
  }
  return { seconds: (performance.now() - started) / 1000, receipts };
}

/** A loopback proxy that holds every request for `delayMs` before forwarding it. */
async function startLatencyProxy(upstream: string, delayMs: number): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
          .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
          .catch(() => res.destroy());
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function freshDb(databaseUrl: string | undefined, name: string): Promise<{ db: Db; drop(): Promise<void> }> {
  if (!databaseUrl) {
    const db = await createDb({});
    await migrate(db);
    return { db, drop: () => db.close() };
  }
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  const db = await createDb({ databaseUrl: url.toString(), max: 5 });
  await migrate(db);
  return {
    db,
    async drop() {
      await db.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

async function backfill(rpcUrl: string, databaseUrl: string | undefined, traces: 'all' | 'needed' | 'off', name: string) {
  const { db, drop } = await freshDb(databaseUrl, name);
  try {
    const config = loadConfig(indexerEnvSchema, { NETWORKS: 'devnet', RPC_URL_DEVNET: rpcUrl, START_BLOCK_DEVNET: '0', INDEXER_POLL_CRON: '0 0 1 1 *', INDEXER_TRACES: traces });
    const started = performance.now();
    const indexer = startIndexer({ db, config, log });
    await indexer.syncNow();
    const seconds = (performance.now() - started) / 1000;
    await indexer.stop();
    const { rows } = await db.query<{ n: string }>('select count(*) as n from user_ops');
    return { seconds, userOps: Number(rows[0]!.n) };
  } finally {
    await drop();
  }
}

export async function runIndexerBench(options: IndexerBenchOptions): Promise<Record<string, unknown>> {
  const devnet = await startDevnet();
  try {
    const generatedAt = performance.now();
    await generateOps(devnet, options.ops);
    const generateSeconds = (performance.now() - generatedAt) / 1000;
    const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
    const entryPoints = Object.values(devnet.truth.entryPoints);
    const tuning = DEFAULT_TUNING;

    const bare1 = await bareFetch(devnet.rpcUrl, entryPoints, head, tuning);
    const noTraces = await backfill(devnet.rpcUrl, options.databaseUrl, 'needed', 'opscan_bench_indexer');
    const withTraces = await backfill(devnet.rpcUrl, options.databaseUrl, 'all', 'opscan_bench_indexer');
    const bare2 = await bareFetch(devnet.rpcUrl, entryPoints, head, tuning);
    const bareSeconds = (bare1.seconds + bare2.seconds) / 2;
    const proxy = await startLatencyProxy(devnet.rpcUrl, REMOTE_RTT_MS / 2);
    const remoteBare = await bareFetch(proxy.url, entryPoints, head, tuning);
    const remote = await backfill(proxy.url, options.databaseUrl, 'needed', 'opscan_bench_indexer').finally(() => proxy.stop());
    const ops = devnet.truth.userOps.length;
    for (const run of [noTraces, withTraces, remote]) if (run.userOps !== ops) throw new Error(`indexed ${run.userOps} of ${ops} ops`);
    const round = (n: number, digits = 2): number => Number(n.toFixed(digits));
    return {
      store: options.databaseUrl ? 'postgres' : 'pglite',
      ops,
      bundles: devnet.truth.bundles.length,
      bundleTransactions: bare1.receipts,
      blocks: head + 1,
      generateSeconds: round(generateSeconds, 1),
      bareFetchSeconds: [round(bare1.seconds), round(bare2.seconds)],
      backfill: { seconds: round(noTraces.seconds), opsPerSecond: Math.round(ops / noTraces.seconds), ratioToBareFetch: round(noTraces.seconds / bareSeconds) },
      backfillWithOpTraces: { seconds: round(withTraces.seconds), opsPerSecond: Math.round(ops / withTraces.seconds), ratioToBareFetch: round(withTraces.seconds / bareSeconds) },
      remoteNode: {
        rttMs: REMOTE_RTT_MS,
        bareFetchSeconds: round(remoteBare.seconds),
        backfill: { seconds: round(remote.seconds), opsPerSecond: Math.round(ops / remote.seconds), ratioToBareFetch: round(remote.seconds / remoteBare.seconds) },
      },
    };
  } finally {
    await devnet.stop();
  }
}
