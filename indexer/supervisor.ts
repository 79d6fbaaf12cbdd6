/**
 * Runs each network this process indexes in a worker thread of its own (indexer/networkWorker.ts)
 * and keeps it running: a worker that throws, exhausts its heap limit (`resourceLimits`), or stops
 * saying it is alive (an event loop stuck for `hangMs`) is ended and started again after a back-off
 * (1 s doubling to 60 s), logged once per outage and counted in
 * `opscan_indexer_network_restarts_total{network,reason}`. The other workers go on untouched: they
 * share nothing with it but the process and the database server. A worker's writer lock is on its
 * own database session, which ends with the thread, so a restarted worker (or another process)
 * takes the network over from its committed cursor.
 */
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Counter, Gauge } from 'prom-client';
import type { NetworkConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { indexerMetrics } from './metrics.js';
import type { FromWorker, NetworkWorkerData, ToWorker, WorkerUsage } from './networkWorkerProtocol.js';

/** Why a worker was started again. */
export type RestartReason = 'error' | 'exit' | 'out_of_memory' | 'hung';

export type SupervisorOptions = {
  log: Logger;
  /** What every network's worker is started with (its network set per worker). */
  worker: Omit<NetworkWorkerData, 'network'>;
  /** INDEXER_NETWORK_HEAP_MB: each worker's V8 old-generation limit. */
  heapMb: number;
  /** INDEXER_NETWORK_YOUNG_MB: each worker's V8 young generation (0: V8's own choice). */
  youngMb: number;
  /** A worker silent this long is taken for hung and ended (default 30 s). */
  hangMs?: number;
  /** How long a new worker may take to say it is alive the first time (default 5 min). */
  startMs?: number;
  /** First back-off before a restart; it doubles per failure of one outage up to 60 s (default 1 s). */
  restartDelayMs?: number;
  /** How long a stopping worker may finish its pass before it is ended (default 15 s). */
  stopTimeoutMs?: number;
};

export type Supervisor = {
  /** Starts workers for the networks named and stops the others' (each network is one worker). */
  run(networks: NetworkConfig[]): Promise<void>;
  /** Networks with a worker now (running or waiting to restart). */
  networks(): string[];
  /** Ends a network's worker as a crash would (tests and the fault bench). */
  kill(network: string): Promise<void>;
  stop(): Promise<void>;
};

const restarts = new Counter({
  name: 'opscan_indexer_network_restarts_total',
  help: 'Network workers started again after a failure, by reason: error (an uncaught throw), out_of_memory (its heap limit), hung (silent past INDEXER_WORKER_HANG_MS), exit (it ended by itself).',
  labelNames: ['network', 'reason'],
});
const running = new Map<string, { usage: WorkerUsage | null; cpuBefore: number }>();
new Gauge({
  name: 'opscan_indexer_network_cpu_seconds',
  help: "CPU seconds used by each network's worker thread of this process since the process started (its own thread; V8's shared GC helpers not included).",
  labelNames: ['network'],
  collect() {
    this.reset();
    for (const [network, r] of running) this.set({ network }, r.cpuBefore + (r.usage?.cpuSeconds ?? 0));
  },
});
new Gauge({
  name: 'opscan_indexer_network_heap_bytes',
  help: "Each network worker's memory: V8 heap in use (used), reserved (total), and held outside the heap (external).",
  labelNames: ['network', 'kind'],
  collect() {
    this.reset();
    for (const [network, { usage }] of running) {
      if (!usage) continue;
      this.set({ network, kind: 'used' }, usage.heapUsedBytes);
      this.set({ network, kind: 'total' }, usage.heapTotalBytes);
      this.set({ network, kind: 'external' }, usage.externalBytes);
    }
  },
});

/** The worker's module next to this one: .js once built; .ts under tsx, whose loader a worker thread registers itself. */
const WORKER_URL = new URL(`./networkWorker${extname(new URL(import.meta.url).pathname)}`, import.meta.url);
const WORKER_SCRIPT: { script: string | URL; eval: boolean } = WORKER_URL.pathname.endsWith('.ts')
  ? { script: `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`, eval: true }
  : { script: WORKER_URL, eval: false };

const MAX_RESTART_DELAY_MS = 60_000;
/** A worker alive this long after a restart ends its outage (the next failure is a new one, logged). */
const RECOVERED_AFTER_MS = 30_000;

export function startSupervisor(options: SupervisorOptions): Supervisor {
  const hangMs = options.hangMs ?? 30_000;
  const startMs = options.startMs ?? 300_000;
  const restartDelayMs = options.restartDelayMs ?? 1_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  const supervised = new Map<string, ReturnType<typeof supervise>>();

  function supervise(network: NetworkConfig) {
    const log = options.log.child({ network: network.name, chainId: network.chainId });
    let worker: Worker | null = null;
    let stopping = false;
    let failures = 0;
    let outageSince: number | null = null;
    /** When the worker last said it is alive (null: not yet, it is loading its modules). */
    let lastBeat: number | null = null;
    let startedAt = 0;
    let ending = false;
    let reason: RestartReason = 'exit';
    let restartTimer: NodeJS.Timeout | undefined;
    let stopped: () => void = () => undefined;
    const record = { usage: null as WorkerUsage | null, cpuBefore: running.get(network.name)?.cpuBefore ?? 0 };
    running.set(network.name, record);

    const start = (): void => {
      const data: NetworkWorkerData = { ...options.worker, network };
      const w = new Worker(WORKER_SCRIPT.script, {
        eval: WORKER_SCRIPT.eval,
        workerData: data,
        resourceLimits: {
          maxOldGenerationSizeMb: options.heapMb,
          ...(options.youngMb > 0 ? { maxYoungGenerationSizeMb: options.youngMb } : {}),
        },
      });
      worker = w;
      startedAt = Date.now();
      lastBeat = null;
      ending = false;
      reason = 'exit';
      w.on('message', (message: FromWorker) => {
        if (message.kind === 'beat') {
          lastBeat = Date.now();
          record.usage = message.usage;
          if (outageSince !== null && Date.now() - startedAt >= RECOVERED_AFTER_MS) {
            log.info({ downSeconds: Math.round((startedAt - outageSince) / 1000), restarts: failures }, 'network worker recovered');
            outageSince = null;
            failures = 0;
          }
        } else if (message.kind === 'metrics') for (const event of message.events) indexerMetrics.record(event);
        else stopped();
      });
      w.on('error', (err: Error & { code?: string }) => {
        reason = err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'out_of_memory' : 'error';
        if (outageSince === null) log.error({ err }, `network worker failed (${reason}); restarting it, the other networks go on`);
        else log.debug({ err }, 'network worker failed again');
      });
      w.once('exit', (code) => {
        record.cpuBefore += record.usage?.cpuSeconds ?? 0;
        record.usage = null;
        worker = null;
        stopped();
        if (stopping) return;
        if (reason === 'exit' && outageSince === null)
          log.error({ code }, 'network worker exited; restarting it, the other networks go on');
        restarts.inc({ network: network.name, reason });
        outageSince ??= Date.now();
        const delay = Math.min(MAX_RESTART_DELAY_MS, restartDelayMs * 2 ** failures++);
        restartTimer = setTimeout(start, delay);
      });
    };

    const watchdog = setInterval(
      () => {
        if (!worker || stopping || ending) return;
        // A worker loading its modules has startMs (many start at once on a busy machine); then hangMs between beats.
        const silentMs = Date.now() - (lastBeat ?? startedAt);
        if (silentMs < (lastBeat === null ? startMs : hangMs)) return;
        reason = 'hung';
        ending = true;
        if (outageSince === null) log.error({ silentMs }, 'network worker hung; ending it and restarting it');
        void worker.terminate();
      },
      Math.min(1_000, hangMs / 2),
    );

    start();
    return {
      kill: async (): Promise<void> => {
        const w = worker;
        if (!w) return;
        reason = 'error';
        await w.terminate();
      },
      stop: async (): Promise<void> => {
        stopping = true;
        clearInterval(watchdog);
        clearTimeout(restartTimer);
        const w = worker;
        if (w) {
          const done = new Promise<void>((resolve) => (stopped = resolve));
          w.postMessage({ kind: 'stop' } satisfies ToWorker);
          const timer = setTimeout(() => void w.terminate(), stopTimeoutMs);
          await done;
          clearTimeout(timer);
          await w.terminate();
        }
        running.delete(network.name);
      },
    };
  }

  return {
    async run(networks) {
      const wanted = new Map(networks.map((n) => [n.name, n]));
      const leaving = [...supervised.entries()].filter(([name]) => !wanted.has(name));
      for (const [name] of leaving) supervised.delete(name);
      for (const [name, network] of wanted) if (!supervised.has(name)) supervised.set(name, supervise(network));
      await Promise.all(leaving.map(([, s]) => s.stop()));
    },
    networks: () => [...supervised.keys()],
    async kill(network) {
      await supervised.get(network)?.kill();
    },
    async stop() {
      const all = [...supervised.values()];
      supervised.clear();
      await Promise.all(all.map((s) => s.stop()));
    },
  };
}
