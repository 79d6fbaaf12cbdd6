/**
 * Fetches everything one block range needs: the EntryPoint logs (fetchLogs), then in JSON-RPC
 * batches the receipt and transaction of each bundle transaction, the headers the reorg checks
 * need (first and last block, the recent window) and, only when logs carry no blockTimestamp,
 * the headers of blocks with activity; traces where the calldata needs one (or all, for op
 * traces). Answers are checked against each other (receipt and header hashes against the logs',
 * the last header before and after): a range fetched across a reorg is refused and fetched again.
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import {
  hexToNumber,
  type BlockHeader,
  type CallFrame,
  type RawBundleTx,
  type RawRange,
  type RpcBlockHeader,
  type RpcLog,
  type RpcReceipt,
  type RpcTransaction,
} from '../decode/chainTypes.js';
import { traceNeeded } from '../decode/decodeTransaction.js';
import { InconsistentRangeError, fetchLogs, type LogRangeEstimator } from './fetchLogs.js';
import type { DelegationMode, TraceMode } from '../tuning.js';
import { fetchAuthorizations } from './fetchAuthorizations.js';
import type { RpcClient, RpcRequest } from './rpcClient.js';
import { isUnsupported } from './rpcErrors.js';
import { TOPICS } from '../../shared/chain/constants.js';

export type ChainSource = {
  rpc: RpcClient;
  chainId: number;
  entryPoints: Map<string, EntryPointVersion>;
  estimator: LogRangeEstimator;
  /** all: trace every bundle transaction (op traces); needed: only where calldata needs one; off: never. */
  traces: TraceMode;
  /**
   * Learned on the first debug_traceTransaction: false when the node has no debug namespace (then
   * the backfill stops asking; the repair pass asks again now and then and sets it back).
   */
  traceSupport: { supported?: boolean };
  onSkippedLog?: (log: RpcLog) => void;
  /**
   * INDEXER_TRANSFERS=known: the range's token logs are read too (every contract's, by topic, on
   * their own range estimate: a chain has far more of them than EntryPoint logs). All are kept,
   * for settleTokenLogs to filter once the ranges before are decoded; the times of the blocks whose
   * logs `mayBeKnown` lets through are fetched with the range. Absent under ops.
   */
  tokenLogs?: { estimator: LogRangeEstimator; mayBeKnown: (address: string) => boolean };
  /**
   * INDEXER_DELEGATIONS. ops: the authorizations of the bundle transactions; all: of every type-4
   * transaction of the range (its blocks read whole). Absent: ops.
   */
  delegations?: DelegationMode;
};

/** Transfer (ERC-20, ERC-721), TransferSingle and TransferBatch (ERC-1155). */
export const TOKEN_TOPICS = [TOPICS.transfer, TOPICS.transferSingle, TOPICS.transferBatch];

/**
 * The addresses the range's EntryPoint logs' topics and first data words may hold: over-inclusive,
 * a filter before exact decoding (which knows the range's senders, paymasters, factories and bundlers).
 */
function entryPointParties(logs: RpcLog[]): Set<string> {
  const out = new Set<string>();
  // A word's address is its last 20 bytes; each is read straight from the topic or the data.
  for (const log of logs) {
    for (let t = 1; t < log.topics.length; t++) {
      const topic = log.topics[t]!;
      if (topic.length === 66) out.add(`0x${topic.slice(26)}`.toLowerCase());
    }
    for (let i = 0; i < 3 && log.data.length >= 66 + 64 * i; i++) out.add(`0x${log.data.slice(26 + 64 * i, 66 + 64 * i)}`.toLowerCase());
  }
  return out;
}

/** The token log's sender and receiver words (Transfer: topics 1, 2; TransferSingle/Batch: topics 2, 3). */
function tokenLogParties(log: RpcLog): string[] {
  const [t0, ...rest] = log.topics;
  const words = t0 === TOPICS.transfer ? rest.slice(0, 2) : rest.slice(1, 3);
  return words.map((w) => `0x${w.slice(26)}`.toLowerCase());
}

export { InconsistentRangeError };

const ZERO_HASH = `0x${'0'.repeat(64)}`;
const hex = (n: number): string => `0x${n.toString(16)}`;

export const toHeader = (b: RpcBlockHeader): BlockHeader => ({
  number: hexToNumber(b.number),
  hash: b.hash.toLowerCase(),
  parentHash: b.parentHash.toLowerCase(),
  timestamp: hexToNumber(b.timestamp),
});

const isHeader = (b: unknown, n: number): boolean => {
  const h = b as RpcBlockHeader | null;
  return (
    !!h && typeof h.hash === 'string' && typeof h.parentHash === 'string' && typeof h.timestamp === 'string' && hexToNumber(h.number) === n
  );
};

/** Headers of `numbers` in one batch (a missing block — beyond the head — is retried). */
export async function fetchHeaders(rpc: RpcClient, numbers: number[]): Promise<BlockHeader[]> {
  const requests = numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [hex(n), false] }));
  const blocks = await rpc.batch<RpcBlockHeader>(requests, (b, r) => isHeader(b, hexToNumber(String(r.params[0]))));
  return blocks.map(toHeader);
}

/** Groups the range's logs by transaction; a transaction with BeforeExecution or a UserOperationEvent holds a bundle. */
function bundleTransactions(logs: RpcLog[]): Map<string, RpcLog> {
  const txs = new Map<string, RpcLog>();
  for (const log of logs) {
    const topic0 = log.topics[0];
    if (topic0 === TOPICS.beforeExecution || topic0 === TOPICS.userOperationEvent) {
      if (!txs.has(log.transactionHash)) txs.set(log.transactionHash, log);
    }
  }
  return txs;
}

type Fetched = {
  receipts: Map<string, RpcReceipt>;
  txs: Map<string, RpcTransaction>;
  headers: Map<number, BlockHeader>;
  traces: Map<string, CallFrame | null>;
};

const check = (result: unknown, r: RpcRequest): boolean => {
  if (r.method === 'eth_getBlockByNumber') return isHeader(result, hexToNumber(String(r.params[0])));
  const o = result as { transactionHash?: string; hash?: string; logs?: unknown; input?: unknown; blockHash?: unknown } | null;
  if (!o || typeof o !== 'object') return false;
  if (r.method === 'eth_getTransactionReceipt')
    return (
      o.transactionHash?.toLowerCase() === String(r.params[0]).toLowerCase() && Array.isArray(o.logs) && typeof o.blockHash === 'string'
    );
  if (r.method === 'eth_getTransactionByHash')
    return o.hash?.toLowerCase() === String(r.params[0]).toLowerCase() && typeof o.input === 'string';
  return typeof (result as CallFrame).type === 'string' && typeof (result as CallFrame).from === 'string';
};

export async function fetchDetails(
  source: Pick<ChainSource, 'rpc' | 'traceSupport'>,
  txHashes: string[],
  headerNumbers: number[],
  traceHashes: string[],
): Promise<Fetched> {
  const requests: RpcRequest[] = [
    ...txHashes.flatMap((h) => [
      { method: 'eth_getTransactionReceipt', params: [h] },
      { method: 'eth_getTransactionByHash', params: [h] },
    ]),
    ...headerNumbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [hex(n), false] })),
    ...(source.traceSupport.supported === false
      ? []
      : traceHashes.map((h) => ({ method: 'debug_traceTransaction', params: [h, { tracer: 'callTracer' }] }))),
  ];
  const settled = await source.rpc.batchSettled<unknown>(requests, check);
  const out: Fetched = { receipts: new Map(), txs: new Map(), headers: new Map(), traces: new Map() };
  settled.forEach((s, i) => {
    const r = requests[i]!;
    if (!s.ok) {
      if (r.method === 'debug_traceTransaction' && isUnsupported(s.error)) {
        source.traceSupport.supported = false;
        out.traces.set(String(r.params[0]), null);
        return;
      }
      throw s.error;
    }
    const key = String(r.params[0]);
    if (r.method === 'eth_getTransactionReceipt') out.receipts.set(key, s.value as RpcReceipt);
    else if (r.method === 'eth_getTransactionByHash') out.txs.set(key, s.value as RpcTransaction);
    else if (r.method === 'eth_getBlockByNumber') out.headers.set(hexToNumber(key), toHeader(s.value as RpcBlockHeader));
    else {
      source.traceSupport.supported = true;
      out.traces.set(key, s.value as CallFrame);
    }
  });
  return out;
}

/**
 * Fetches [fromBlock, toBlock]. Headers of blocks ≥ `windowFrom` are all fetched (kept for reorg
 * detection near the head).
 */
export async function fetchRange(
  source: ChainSource,
  range: { fromBlock: number; toBlock: number; windowFrom: number },
): Promise<RawRange> {
  const { fromBlock, toBlock } = range;
  // Within the reorg window the range's last header is read first: read again after the logs, a
  // different hash says a reorg ran meanwhile. Below it blocks are final, and a backfill through a
  // provider's round trip does not wait for that read.
  const lastBefore = toBlock >= range.windowFrom ? (await fetchHeaders(source.rpc, [toBlock]))[0]! : null;
  // The token logs (INDEXER_TRANSFERS=known) are asked for with the EntryPoint logs: one round trip, not two.
  const allTokenLogs = source.tokenLogs
    ? fetchLogs(source.rpc, { fromBlock, toBlock, topics: [TOKEN_TOPICS] }, source.tokenLogs.estimator)
    : Promise.resolve([]);
  allTokenLogs.catch(() => undefined); // awaited below, after the EntryPoint logs
  // Logs without a transaction (zkSync-style system logs) cannot belong to a bundle: skipped.
  const logs = (await fetchLogs(source.rpc, { fromBlock, toBlock, addresses: [...source.entryPoints.keys()] }, source.estimator)).filter(
    (log) => {
      if (log.transactionHash !== ZERO_HASH) return true;
      source.onSkippedLog?.(log);
      return false;
    },
  );

  const blockHashes = new Map<number, string>();
  const blockTimes = new Map<number, number>();
  for (const log of logs) {
    const n = hexToNumber(log.blockNumber);
    const seen = blockHashes.get(n);
    if (seen && seen !== log.blockHash.toLowerCase()) throw new InconsistentRangeError(`logs of block ${n} come from two forks`);
    blockHashes.set(n, log.blockHash.toLowerCase());
    if (log.blockTimestamp) blockTimes.set(n, hexToNumber(log.blockTimestamp));
  }
  const headerNumbers = new Set<number>([fromBlock, toBlock]);
  for (let n = Math.max(fromBlock, range.windowFrom); n <= toBlock; n++) headerNumbers.add(n);
  for (const n of blockHashes.keys()) if (!blockTimes.has(n)) headerNumbers.add(n);

  const bundleTxs = bundleTransactions(logs);
  const txHashes = [...bundleTxs.keys()];
  // Token logs outside bundle transactions; the times of blocks where a party may be known.
  let tokenLogs: RpcLog[] | undefined;
  if (source.tokenLogs) {
    const { mayBeKnown } = source.tokenLogs;
    // Needed only for a token log without its block's time (most nodes send it): formed then.
    let seenHere: Set<string> | undefined;
    tokenLogs = (await allTokenLogs).filter((l) => l.transactionHash !== ZERO_HASH && !bundleTxs.has(l.transactionHash));
    for (const log of tokenLogs) {
      const n = hexToNumber(log.blockNumber);
      const seen = blockHashes.get(n);
      if (seen && seen !== log.blockHash.toLowerCase()) throw new InconsistentRangeError(`logs of block ${n} come from two forks`);
      blockHashes.set(n, log.blockHash.toLowerCase());
      if (log.blockTimestamp) blockTimes.set(n, hexToNumber(log.blockTimestamp));
      else if (!blockTimes.has(n)) {
        const parties = (seenHere ??= entryPointParties(logs));
        if (tokenLogParties(log).some((a) => parties.has(a) || mayBeKnown(a))) headerNumbers.add(n);
      }
    }
  }
  let traceHashes = source.traces === 'all' ? txHashes : [];
  let fetched = await fetchDetails(source, txHashes, [...headerNumbers], traceHashes);
  // Traces needed only to recover calldata (wrapper or multi-bundle transactions whose bundles are
  // not found inside tx.input): a second round.
  if (source.traces === 'needed' && source.traceSupport.supported !== false) {
    traceHashes = txHashes.filter((h) => traceNeeded(fetched.receipts.get(h)!, fetched.txs.get(h)!, source));
    if (traceHashes.length > 0) fetched = { ...fetched, traces: (await fetchDetails(source, [], [], traceHashes)).traces };
  }

  const headers = [...fetched.headers.values()].sort((a, b) => a.number - b.number);
  for (const h of headers) {
    const logHash = blockHashes.get(h.number);
    if (logHash && logHash !== h.hash) throw new InconsistentRangeError(`block ${h.number} changed while its range was fetched`);
    blockTimes.set(h.number, blockTimes.get(h.number) ?? h.timestamp);
  }
  const last = fetched.headers.get(toBlock)!;
  if (lastBefore && last.hash !== lastBefore.hash) throw new InconsistentRangeError(`block ${toBlock} changed while its range was fetched`);

  const rawTxs: RawBundleTx[] = txHashes.map((h) => {
    const receipt = fetched.receipts.get(h)!;
    const log = bundleTxs.get(h)!;
    // A load-balanced RPC may answer from another fork than the logs came from.
    if (receipt.blockHash.toLowerCase() !== log.blockHash.toLowerCase())
      throw new InconsistentRangeError(`receipt of ${h} is from another block than its logs`);
    const trace = fetched.traces.get(h);
    // null: the node cannot trace (or traces are off); undefined: not asked, none was needed.
    const untraced = source.traceSupport.supported === false || source.traces === 'off' ? null : undefined;
    return {
      receipt,
      tx: fetched.txs.get(h)!,
      trace: trace === undefined ? untraced : trace,
      blockTime: blockTimes.get(hexToNumber(receipt.blockNumber))!,
    };
  });
  rawTxs.sort(
    (a, b) =>
      hexToNumber(a.receipt.blockNumber) - hexToNumber(b.receipt.blockNumber) ||
      hexToNumber(a.receipt.transactionIndex) - hexToNumber(b.receipt.transactionIndex),
  );

  const { authorizationTxs, authorityNonces } = await fetchAuthorizations(source, {
    fromBlock,
    toBlock,
    bundleTxs: rawTxs,
    headers: fetched.headers,
  });

  return {
    chainId: source.chainId,
    fromBlock,
    toBlock,
    headers,
    authorizationTxs,
    authorityNonces,
    entryPointLogs: logs,
    bundleTxs: rawTxs,
    blockTimes,
    tracesSupported: source.traceSupport.supported !== false,
    ...(tokenLogs ? { tokenLogs } : {}),
  };
}

/**
 * INDEXER_TRANSFERS=known, once the ranges before this one are decoded (their new addresses are
 * known then): keeps the token logs where a party may concern a known address — one of `known`
 * (known before the range) or a party of the range's EntryPoint logs, which decodeRange checks
 * exactly — and fetches the times of their blocks not fetched with the range.
 */
export async function settleTokenLogs(rpc: RpcClient, raw: RawRange, known: Set<string>): Promise<void> {
  if (!raw.tokenLogs || raw.tokenLogs.length === 0) return;
  const seenHere = entryPointParties(raw.entryPointLogs);
  raw.tokenLogs = raw.tokenLogs.filter((l) => tokenLogParties(l).some((a) => seenHere.has(a) || known.has(a)));
  const untimed = [...new Set(raw.tokenLogs.map((l) => hexToNumber(l.blockNumber)).filter((n) => !raw.blockTimes.has(n)))];
  if (untimed.length === 0) return;
  const logHashes = new Map(raw.tokenLogs.map((l) => [hexToNumber(l.blockNumber), l.blockHash.toLowerCase()]));
  for (const h of await fetchHeaders(rpc, untimed)) {
    if (h.hash !== logHashes.get(h.number)) throw new InconsistentRangeError(`block ${h.number} changed while its range was fetched`);
    raw.blockTimes.set(h.number, h.timestamp);
  }
}

/** Every party of the range's token logs (what settleTokenLogs needs to know about). */
export function tokenLogPartiesOf(raw: RawRange): Set<string> {
  const out = new Set<string>();
  for (const log of raw.tokenLogs ?? []) for (const a of tokenLogParties(log)) out.add(a);
  return out;
}
