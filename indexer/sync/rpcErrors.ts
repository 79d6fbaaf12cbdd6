/**
 * How the indexer classifies JSON-RPC failures: what to retry (on the next URL), what to give up
 * on (the method is not supported, the call reverted), and what means "ask for less" (a log range
 * or batch the provider refuses). Provider messages follow Ponder's getLogsRetryHelper.
 */

/** A JSON-RPC error object answered for one call. */
export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message} (code ${code})`);
    this.name = 'RpcCallError';
  }
}

/** The method does not exist or is disabled on this node: retrying cannot help. */
export function isUnsupported(e: { code: number; message: string }): boolean {
  return (
    e.code === -32601 ||
    e.code === -32004 ||
    /method .*(not (found|supported|available|exist))|not supported|unsupported method|does not exist\/is not available/i.test(e.message)
  );
}

/**
 * The node no longer holds the state asked for (a full node prunes all but its recent blocks'):
 * retrying cannot help, only an archive node can answer.
 */
export function isStateUnavailable(e: { code: number; message: string }): boolean {
  return /missing trie node|historical state|state (is )?(not available|unavailable|pruned)|state histories haven't been fully indexed/i.test(
    e.message,
  );
}

/** eth_call reverted (token metadata of a contract without name()). */
export function isRevert(e: { code: number; message: string }): boolean {
  return e.code === 3 || /revert/i.test(e.message);
}

const RANGE_PATTERNS = [
  /block range/i,
  /range (is )?too (large|wide)/i,
  /too many (results|logs|blocks)/i,
  /query (returned|exceeds) more than/i,
  /exceed(s|ed)? (max|maximum)? ?(results|limit)/i,
  /logs matched by query exceeds/i,
  /response (is )?too (large|big)|response size/i,
  /limited to a? ?\d+/i,
  /max(imum)? (range|is set to)/i,
  /try with this block range/i,
];

/** eth_getLogs refused the range (too wide or too many results): split it. */
export function isLogRangeError(e: { code: number; message: string }): boolean {
  // Infura's -32005 also says "request rate limited": that is the pace, not the range.
  if (isRateLimited(e)) return false;
  return e.code === -32005 && /range|logs|results|limit/i.test(e.message) ? true : RANGE_PATTERNS.some((p) => p.test(e.message));
}

/** A range the provider suggests in its message ("this block range should work: [0x1, 0x2]"), as a block count. */
export function suggestedRangeSize(message: string): number | null {
  const pair = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(message);
  if (pair) return Number.parseInt(pair[2]!, 16) - Number.parseInt(pair[1]!, 16) + 1;
  const limit =
    /(?:limited to a?|maximum is set to|max range:?|block range (?:limit|is) ?(?:of|is)?|range \d+ exceeds limit of)\s*(\d[\d,]*)/i.exec(
      message,
    );
  return limit ? Number(limit[1]!.replace(/,/g, '')) : null;
}

/**
 * The endpoint takes no JSON-RPC batches at all (public and gateway endpoints answer a batch with
 * one error object): send each call on its own.
 */
export function isBatchUnsupported(e: { code: number; message: string }): boolean {
  return /batch(es| requests?)? (are |is )?not (supported|allowed|enabled|available)|does not support batch|batching (is )?(not supported|disabled)/i.test(
    e.message,
  );
}

/** The provider refused the size of a JSON-RPC batch: halve it. */
export function isBatchLimitError(e: { code: number; message: string }): boolean {
  return e.code === -32014 || /batch (size|limit)|too many (requests|calls) in (a )?batch|batch too large/i.test(e.message);
}

/**
 * The endpoint refused the call for the plan's pace (HTTP 429's body, or an error object in a 200:
 * Alchemy's 429, QuickNode's -32007, public endpoints' "rate limit exceeded"): send slower.
 */
export function isRateLimited(e: { code: number; message: string }): boolean {
  return (
    e.code === 429 ||
    e.code === -32007 ||
    /rate.?limit|request limit|too many requests|exceeded its compute units|capacity exceeded|throughput/i.test(e.message)
  );
}
