/**
 * eth_getLogs over every EntryPoint address of a network, one call per block range, the range
 * adapting to the provider: it shrinks to the provider's suggestion (or halves) when a range is
 * refused as too wide or too full, or when an answer holds more logs than a batch should, and
 * grows back after each accepted range: ×2 while answers are sparse, ×1.05 near the target
 * (Ponder's estimatedRange). A single block whose logs exceed the provider's result cap (a spam
 * block on Polygon holds more than 10,000) is read from its receipts instead and filtered here.
 */
import { RetryableError } from '../../shared/errors.js';
import { hexToNumber, type RpcLog, type RpcReceipt } from '../decode/chainTypes.js';
import type { RpcClient } from './rpcClient.js';
import { RpcCallError, isLogRangeError, isUnsupported, suggestedRangeSize } from './rpcErrors.js';

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

/** The range was fetched while the chain changed under it; fetching it again is the fix. */
export class InconsistentRangeError extends RetryableError {}

type LogFilter = { addresses?: string[]; topics?: Array<string | string[] | null> };

/** Whether `log` passes an eth_getLogs filter (addresses: any of; topics: positional, null or [] any, an array any of). */
function matches(log: RpcLog, filter: LogFilter, addresses: Set<string> | undefined): boolean {
  if (addresses && !addresses.has(log.address.toLowerCase())) return false;
  return (filter.topics ?? []).every((want, i) => {
    if (want === null || (Array.isArray(want) && want.length === 0)) return true;
    const topic = log.topics[i]?.toLowerCase();
    return topic !== undefined && (Array.isArray(want) ? want.some((w) => w.toLowerCase() === topic) : want.toLowerCase() === topic);
  });
}

const isReceiptOf = (r: unknown, blockNumber: number): boolean => {
  const receipt = r as RpcReceipt | null;
  return (
    !!receipt && Array.isArray(receipt.logs) && typeof receipt.blockHash === 'string' && hexToNumber(receipt.blockNumber) === blockNumber
  );
};

/**
 * The logs of one block matching `filter`, read from the block's receipts: eth_getBlockReceipts
 * where the node has it, else the block's transaction hashes and a receipt each. Used when the
 * provider refuses even a one-block eth_getLogs for its result cap; the receipts of one block are
 * never capped that way. A block read across a reorg (receipts of two blocks) is read again.
 */
export async function blockLogs(rpc: RpcClient, blockNumber: number, filter: LogFilter): Promise<RpcLog[]> {
  const tag = `0x${blockNumber.toString(16)}`;
  let receipts: RpcReceipt[];
  try {
    receipts = await rpc.call<RpcReceipt[]>(
      'eth_getBlockReceipts',
      [tag],
      (r) => Array.isArray(r) && r.every((x) => isReceiptOf(x, blockNumber)),
    );
  } catch (err) {
    if (!(err instanceof RpcCallError) || !isUnsupported(err)) throw err;
    const block = await rpc.call<{ hash: string; transactions: string[] }>(
      'eth_getBlockByNumber',
      [tag, false],
      (b) => !!b && typeof b.hash === 'string' && Array.isArray(b.transactions),
    );
    const requests = block.transactions.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] }));
    receipts = await rpc.batch<RpcReceipt>(
      requests,
      (r) => isReceiptOf(r, blockNumber) && r.blockHash.toLowerCase() === block.hash.toLowerCase(),
    );
  }
  if (new Set(receipts.map((r) => r.blockHash.toLowerCase())).size > 1)
    throw new InconsistentRangeError(`receipts of block ${blockNumber} come from two forks`);
  const addresses = filter.addresses && new Set(filter.addresses.map((a) => a.toLowerCase()));
  return receipts.flatMap((r) => r.logs.filter((log) => matches(log, filter, addresses)));
}

/**
 * Every log of `addresses` (any contract when absent) matching `topics` (eth_getLogs' positional
 * filter) in [fromBlock, toBlock], in chain order; splits refused ranges.
 */
export async function fetchLogs(
  rpc: RpcClient,
  range: { fromBlock: number; toBlock: number } & LogFilter,
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
      if (!(err instanceof RpcCallError) || !isLogRangeError(err)) throw err;
      if (to === from) {
        out.push(...(await blockLogs(rpc, from, range)));
        from = to + 1;
        continue;
      }
      estimator.onRefused(to - from + 1, suggestedRangeSize(err.message));
    }
  }
  return out.sort((a, b) => hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) || hexToNumber(a.logIndex) - hexToNumber(b.logIndex));
}
