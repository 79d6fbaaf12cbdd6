/**
 * Backfill progress in the logs: blocks done of the total, ops per second and the time left,
 * at most once per interval (static message, numbers in fields). The few blocks of each head
 * poll are logged at debug level only.
 */
import type { Logger } from '../shared/log.js';

const REPORT_INTERVAL_MS = 5_000;
/** Catch-ups shorter than this are head following, not a backfill: logged at debug level. */
const BACKFILL_BLOCKS = 1_000;

export class Progress {
  private readonly startedAt = Date.now();
  private lastReport = Date.now();
  private blocksDone = 0;
  private ops = 0;

  constructor(
    private readonly log: Logger,
    private readonly fromBlock: number,
    private readonly toBlock: number,
  ) {}

  get totalBlocks(): number {
    return this.toBlock - this.fromBlock + 1;
  }

  /** Records a persisted batch ending at `indexedBlock`; logs when the interval has passed (or at the end). */
  add(indexedBlock: number, ops: number): void {
    this.blocksDone = indexedBlock - this.fromBlock + 1;
    this.ops += ops;
    const now = Date.now();
    const done = indexedBlock >= this.toBlock;
    if (!done && now - this.lastReport < REPORT_INTERVAL_MS) return;
    this.lastReport = now;
    const seconds = Math.max((now - this.startedAt) / 1000, 0.001);
    const blocksPerSecond = this.blocksDone / seconds;
    const level = this.totalBlocks >= BACKFILL_BLOCKS ? 'info' : 'debug';
    this.log[level](
      {
        blocksDone: this.blocksDone,
        blocksTotal: this.totalBlocks,
        indexedBlock,
        userOps: this.ops,
        opsPerSecond: Math.round(this.ops / seconds),
        etaSeconds: done ? 0 : Math.round((this.totalBlocks - this.blocksDone) / Math.max(blocksPerSecond, 1e-9)),
      },
      done ? 'backfill range done' : 'backfilling',
    );
  }
}
