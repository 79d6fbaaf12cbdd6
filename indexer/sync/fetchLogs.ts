/**
 * eth_getLogs over every EntryPoint address of a network, one call per block range, the range
 * adapting to the provider: it shrinks to the provider's suggestion (or halves) when a range is
 * refused as too wide or too full, or when an answer holds more logs than a batch should, and
 * grows back after each accepted range: ×2 while answers are sparse, ×1.05 near the target
 * (Ponder's estimatedRange).
 * @see research/indexer.md §4.2
 */
import { hexToNumber, type RpcLog } from '../decode/chainTypes.js';
import type { RpcClient } from './rpcClient.js';
import { RpcCallError, isLogRangeError, suggestedRangeSize } from './rpcErrors.js';

export type LogRangeOptions = {
  initialRange?: number;
  maxRange?: number;
  /** Answers with more logs than this shrink the next range (keeps batches and memory bounded). */
  targetLogs?: number;
};

/** The shared estimate of how many blocks one eth_getLogs may span. */
export class LogRangeEstimator {
  private estimate: number;
  readonly maxRange: number;
  readonly targetLogs: number;

  constructor(options: LogRangeOptions = {}) {
    this.maxRange = options.maxRange ?? 10_000;
    this.estimate = Math.min(options.initialRange ?? 500, this.maxRange);
    this.targetLogs = options.targetLogs ?? 5_000;
  }

  get size(): number {
    return Math.max(1, Math.floor(this.estimate));
  }

  onSuccess(blocks: number, logs: number): void {
    if (blocks < this.size) return; // a short range (the head, or a split) says little
    if (logs > this.targetLogs) this.estimate = Math.max(1, (blocks * this.targetLogs) / logs);
    // Sparse ranges (most of a chain's history) double; near the target, Ponder's gentle ×1.05.
    else if (logs < this.targetLogs / 2) this.estimate = Math.min(this.maxRange, this.estimate * 2);
    else this.estimate = Math.min(this.maxRange, this.estimate * 1.05 + 1);
  }

  onRefused(blocks: number, suggested: number | null): void {
    this.estimate = Math.max(1, suggested && suggested < blocks ? suggested : Math.floor(blocks / 2));
  }
}

const isRpcLog = (l: unknown): l is RpcLog => {
  const log = l as RpcLog;
  return (
    !!log &&
    typeof log.address === 'string' &&
    Array.isArray(log.topics) &&
    typeof log.data === 'string' &&
    typeof log.blockHash === 'string' &&
    typeof log.transactionHash === 'string' &&
    typeof log.logIndex === 'string'
  );
};

/**
 * Every log of `addresses` (any contract when absent) matching `topics` (eth_getLogs' positional
 * filter) in [fromBlock, toBlock], in chain order; splits refused ranges.
 */
export async function fetchLogs(
  rpc: RpcClient,
  range: { fromBlock: number; toBlock: number; addresses?: string[]; topics?: Array<string | string[] | null> },
  estimator: LogRangeEstimator,
): Promise<RpcLog[]> {
  const out: RpcLog[] = [];
  let from = range.fromBlock;
  while (from <= range.toBlock) {
    const to = Math.min(range.toBlock, from + estimator.size - 1);
    try {
      const logs = await rpc.call<RpcLog[]>(
        'eth_getLogs',
        [
          {
            fromBlock: `0x${from.toString(16)}`,
            toBlock: `0x${to.toString(16)}`,
            ...(range.addresses ? { address: range.addresses } : {}),
            ...(range.topics ? { topics: range.topics } : {}),
          },
        ],
        // A malformed answer (not an array of logs, or logs outside the range) is retried.
        (r) => Array.isArray(r) && r.every((l) => isRpcLog(l) && hexToNumber(l.blockNumber) >= from && hexToNumber(l.blockNumber) <= to),
      );
      estimator.onSuccess(to - from + 1, logs.length);
      out.push(...logs);
      from = to + 1;
    } catch (err) {
      if (!(err instanceof RpcCallError) || !isLogRangeError(err) || to === from) throw err;
      estimator.onRefused(to - from + 1, suggestedRangeSize(err.message));
    }
  }
  return out.sort((a, b) => hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) || hexToNumber(a.logIndex) - hexToNumber(b.logIndex));
}
