/**
 * One network's worker thread (started by indexer/supervisor.ts): the network's runner on an event
 * loop of its own, with its own database pool, so that no other network's decoding or writing
 * delays its blocks, and a throw, a hang or a full heap here ends this thread only. Its counts go to
 * the supervisor's /metrics; each second it says it is alive and what it has used.
 */
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { createDb } from '../shared/db/client.js';
import { createLogger } from '../shared/log.js';
import { indexerMetrics, type MetricsEvent } from './metrics.js';
import { WORKER_BEAT_MS, type FromWorker, type NetworkWorkerData, type ToWorker, type WorkerUsage } from './networkWorkerProtocol.js';
import { runNetwork } from './runNetwork.js';

if (!parentPort) throw new Error('indexer/networkWorker.ts runs as a worker thread of the indexer');
const port = parentPort;
const data = workerData as NetworkWorkerData;
const post = (message: FromWorker): void => port.postMessage(message);

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux Node runs on). */
const CLOCK_TICKS = 100;

/** This thread's CPU seconds from /proc/thread-self/stat (fields 14 and 15), or null off Linux. */
function threadCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function usage(): WorkerUsage {
  const heap = getHeapStatistics();
  return {
    cpuSeconds: threadCpuSeconds(),
    heapUsedBytes: heap.used_heap_size,
    heapTotalBytes: heap.total_heap_size,
    externalBytes: heap.external_memory,
  };
}

// Counts go to the supervisor in batches: one message per call made (16 a Base block) cost the
// thread ~2.5 % of its CPU in postMessage alone.
const METRICS_FLUSH_MS = 100;
let pendingMetrics: MetricsEvent[] = [];
let metricsTimer: NodeJS.Timeout | undefined;
const flushMetrics = (): void => {
  clearTimeout(metricsTimer);
  metricsTimer = undefined;
  if (pendingMetrics.length > 0) post({ kind: 'metrics', events: pendingMetrics });
  pendingMetrics = [];
};
indexerMetrics.forwardTo((event) => {
  pendingMetrics.push(event);
  metricsTimer ??= setTimeout(flushMetrics, METRICS_FLUSH_MS);
});
const log = createLogger({ level: data.log.level, name: 'indexer', format: data.log.format });
const db = await createDb({
  databaseUrl: data.databaseUrl,
  // The writer lock's session, two overlapping batch writes, and the reads made beside them (known
  // addresses, tokens, the backfill): an idle connection closes after 10 s, so a quiet network keeps
  // one or two. With 3 the busiest networks waited for connections (base 22 blocks behind).
  max: 5,
  statementTimeoutMs: data.statementTimeoutMs,
  log,
});
const runner = runNetwork({ db, log, network: data.network, settings: data.settings });
const beat = setInterval(() => post({ kind: 'beat', usage: usage() }), WORKER_BEAT_MS);
post({ kind: 'beat', usage: usage() });

port.on('message', (message: ToWorker) => {
  if (message.kind !== 'stop') return;
  clearInterval(beat);
  void runner
    .stop()
    .then(() => db.close())
    .finally(() => {
      flushMetrics();
      post({ kind: 'stopped' });
    });
});
