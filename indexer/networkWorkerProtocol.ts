/**
 * The contract between the supervisor (indexer/supervisor.ts, the indexer process's main thread)
 * and one network's worker thread (indexer/networkWorker.ts): what the worker is started with and
 * the messages each side posts. Both sides import it; nothing else crosses the thread boundary.
 */
import type { NetworkConfig } from '../shared/config.js';
import type { LogFormat } from '../shared/log.js';
import type { MetricsEvent } from './metrics.js';
import type { RunSettings } from './runSettings.js';

/** `workerData` of a network's worker: everything runNetwork needs, as plain data. */
export type NetworkWorkerData = {
  /** With the process's `application_name` (shared/db/tables/indexerMembers.ts: sessionUrl): its sessions say it is alive. */
  databaseUrl: string;
  /** DB_STATEMENT_TIMEOUT_MS (undefined: no limit). */
  statementTimeoutMs?: number;
  network: NetworkConfig;
  settings: RunSettings;
  log: { level: string; format?: LogFormat };
};

/** How often a worker says it is alive (and what it has used): a silent worker is a hung one. */
export const WORKER_BEAT_MS = 1_000;

/** The worker's own use of the machine, read in the worker's thread. */
export type WorkerUsage = {
  /** CPU seconds of the worker's thread (user + system, /proc/thread-self/stat), since it started. */
  cpuSeconds: number | null;
  /** Its V8 heap in use and reserved, and memory held outside the heap (buffers), in bytes. */
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
};

export type FromWorker =
  | { kind: 'beat'; usage: WorkerUsage }
  | { kind: 'metrics'; events: MetricsEvent[] }
  /** The runner has stopped and the worker's database sessions are closed: it may be ended. */
  | { kind: 'stopped' };

export type ToWorker = { kind: 'stop' };
