/**
 * Backfill progress in the logs: blocks done of the total, ops per second and the time left,
 * at most once per interval (static message, numbers in fields).
 */
import type { Logger } from '../shared/log.js';

const REPORT_INTERVAL_MS = 5_000;

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
    this.log.info(
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
