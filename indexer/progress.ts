/**
 * Backfill progress: blocks done of the total, ops per second and the time left. On a terminal
 * (human-readable logs) a live bar per network stays below the logs; otherwise a structured line
 * at most once per interval (static message, numbers in fields). The few blocks of each head poll
 * are logged at debug level only and draw no bar.
 */
import { terminalLiveLines, type Logger } from '../shared/log.js';
import { indexerMetrics } from './metrics.js';

const REPORT_INTERVAL_MS = 5_000;
/** Catch-ups shorter than this are head following, not a backfill: logged at debug level. */
const BACKFILL_BLOCKS = 1_000;
const BAR_WIDTH = 24;

export type ProgressReport = {
  network: string;
  blocksDone: number;
  blocksTotal: number;
  indexedBlock: number;
  userOps: number;
  opsPerSecond: number;
  etaSeconds: number;
};

/** `devnet  [██████░░░░]  40%  4000/10000 blocks  120 ops/s  ETA 1m05s` */
export function progressBar(r: ProgressReport): string {
  const share = r.blocksTotal > 0 ? Math.min(1, r.blocksDone / r.blocksTotal) : 1;
  const filled = Math.round(share * BAR_WIDTH);
  const eta = r.etaSeconds >= 60 ? `${Math.floor(r.etaSeconds / 60)}m${String(r.etaSeconds % 60).padStart(2, '0')}s` : `${r.etaSeconds}s`;
  return (
    `${r.network.padEnd(12)} [${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%  ` +
    `${r.blocksDone}/${r.blocksTotal} blocks  ${r.opsPerSecond} ops/s  ETA ${eta}`
  );
}

export class Progress {
  private readonly startedAt = Date.now();
  private lastReport = Date.now();
  private blocksDone = 0;
  private ops = 0;
  private readonly network: string;

  constructor(
    private readonly log: Logger,
    private readonly fromBlock: number,
    private readonly toBlock: number,
  ) {
    const bound: unknown = log.bindings().network;
    this.network = typeof bound === 'string' ? bound : 'network';
  }

  get totalBlocks(): number {
    return this.toBlock - this.fromBlock + 1;
  }

  private get isBackfill(): boolean {
    return this.totalBlocks >= BACKFILL_BLOCKS;
  }

  /**
   * Records a persisted batch ending at `indexedBlock` (written in `writeSeconds`); draws the bar,
   * or logs when the interval has passed (or at the end).
   */
  add(indexedBlock: number, ops: number, writeSeconds?: number): void {
    this.blocksDone = indexedBlock - this.fromBlock + 1;
    this.ops += ops;
    indexerMetrics.batchWritten(this.network, ops, writeSeconds);
    const now = Date.now();
    const done = indexedBlock >= this.toBlock;
    const seconds = Math.max((now - this.startedAt) / 1000, 0.001);
    const blocksPerSecond = this.blocksDone / seconds;
    const report: ProgressReport = {
      network: this.network,
      blocksDone: this.blocksDone,
      blocksTotal: this.totalBlocks,
      indexedBlock,
      userOps: this.ops,
      opsPerSecond: Math.round(this.ops / seconds),
      etaSeconds: done ? 0 : Math.round((this.totalBlocks - this.blocksDone) / Math.max(blocksPerSecond, 1e-9)),
    };
    const live = this.isBackfill ? terminalLiveLines() : null;
    if (live) {
      const key = `backfill:${this.network}`;
      if (done) live.delete(key);
      else live.set(key, progressBar(report));
    }
    if (!done && now - this.lastReport < REPORT_INTERVAL_MS) return;
    this.lastReport = now;
    // With a live bar on screen, the periodic lines would only repeat it: the final line stays.
    if (live && !done) return;
    const { network: _network, ...fields } = report;
    this.log[this.isBackfill ? 'info' : 'debug'](fields, done ? 'backfill range done' : 'backfilling');
  }
}
