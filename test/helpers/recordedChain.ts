/**
 * A recorded chain for tests: a JSON-RPC server on 127.0.0.1 that answers what the indexer asks
 * from transactions recorded on a public chain (Blockscout's fixtures, found as FIXTURES_DIR
 * says: `[eth_getTransactionByHash, eth_getTransactionReceipt, callTracer
 * frame?, …, parity trace list?]`). The fixtures hold no block headers, so the chain around them
 * is synthesised: every block number up to the head has a header whose parentHash is the previous
 * block's hash; a recorded transaction's block keeps the real hash and number its receipt names.
 * Single calls and batches are answered; what the recording cannot know is refused the way a
 * node would refuse it (no trace: "method not available"; eth_call: no state).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RpcLog } from '../../indexer/decode/chainTypes.js';

/**
 * The real-chain fixtures, which are not copied into the repository: REALCHAIN_FIXTURES_DIR when
 * set, else a `shared/realchain/fixtures/blockscout-rs` folder beside the repository's folder, else
 * the same folder at its home on the team's machines, so that a clone made elsewhere on such a
 * machine (CI clones to a scratch folder) still finds them. Without them the real-chain test skips.
 */
const FIXTURES_CANDIDATES = [
  process.env.REALCHAIN_FIXTURES_DIR,
  resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared/realchain/fixtures/blockscout-rs'),
  '/work/shared/realchain/fixtures/blockscout-rs',
].filter((dir): dir is string => !!dir);
export const FIXTURES_DIR = FIXTURES_CANDIDATES.find((dir) => existsSync(dir)) ?? FIXTURES_CANDIDATES[0]!;

/** A recorded log is what a node answers for eth_getLogs, as the indexer reads it. */
export type RecordedLog = RpcLog;

export type RecordedTx = {
  hash: string;
  from: string;
  to: string | null;
  input: string;
  type: string;
  chainId?: string;
  blockNumber: string;
  blockHash: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  authorizationList?: Array<{ chainId: string; address: string; nonce: string; yParity: string; r: string; s: string }>;
  [field: string]: unknown;
};

export type RecordedReceipt = {
  transactionHash: string;
  blockNumber: string;
  blockHash: string;
  from: string;
  to: string | null;
  status: string;
  gasUsed: string;
  effectiveGasPrice: string;
  logs: RecordedLog[];
  l1Fee?: string;
  cumulativeGasUsed?: string;
  [field: string]: unknown;
};

export type CallFrame = { type: string; from: string; to?: string; input: string; error?: string; calls?: CallFrame[] };

/** One recorded transaction: what the fixture file holds. */
export type RecordedTransaction = {
  name: string;
  tx: RecordedTx;
  receipt: RecordedReceipt;
  /** geth `callTracer` frame, when the recording has one. */
  callTrace: CallFrame | null;
  /** parity `trace_transaction` list, when the recording has one. */
  parityTrace: unknown[] | null;
};

const isFrame = (x: unknown): x is CallFrame =>
  !!x && typeof x === 'object' && 'type' in x && 'from' in x && 'input' in x && !('hash' in x);

/** Reads `<name>.json` from the fixture folder (the caller checks the folder exists). */
export function readRecordedTransaction(name: string, dir = FIXTURES_DIR): RecordedTransaction {
  const items = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as unknown[];
  const [tx, receipt, ...rest] = items as [RecordedTx, RecordedReceipt, ...unknown[]];
  if (tx.hash !== receipt.transactionHash) throw new Error(`${name}: transaction and receipt disagree`);
  return {
    name,
    tx,
    receipt,
    callTrace: rest.find(isFrame) ?? null,
    parityTrace: (rest.find((x) => Array.isArray(x)) as unknown[] | undefined) ?? null,
  };
}

/** Whether the fixture folder is present (tests skip, saying where they looked, when it is not). */
export function fixturesPresent(dir = FIXTURES_DIR): boolean {
  return existsSync(dir);
}

export type RecordedChainOptions = {
  chainId: number;
  transactions: RecordedTransaction[];
  /** Synthetic blocks after the last recorded one (the head is that far above it). */
  blocksAfter?: number;
};

export type RecordedChain = {
  url: string;
  head: number;
  /** The header the server answers for block `n` (what the indexer should have stored). */
  header(n: number): BlockHeader;
  /** Requests per method, for asserting what the indexer asked. */
  calls: Map<string, number>;
  stop(): Promise<void>;
};

export type BlockHeader = {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  baseFeePerGas: string;
  gasLimit: string;
  gasUsed: string;
  miner: string;
  transactions: unknown[];
};

type RpcMessage = { jsonrpc?: string; id?: unknown; method?: string; params?: unknown[] };
type RpcError = { code: number; message: string };

const hex = (n: number | bigint): string => `0x${n.toString(16)}`;
const num = (h: string): number => Number.parseInt(h, 16);

/** Post-merge Ethereum: block 15537394 (The Merge) at 1663224179, one block per 12 s slot. */
const MAINNET_MERGE = { block: 15_537_394, time: 1_663_224_179, seconds: 12 };

class RpcFailure extends Error {
  constructor(readonly error: RpcError) {
    super(error.message);
  }
}

/**
 * Starts the server. The recorded blocks must be distinct; their synthetic neighbours get
 * invertible hashes (`0xfeedface` ‖ chain id ‖ number), so eth_getBlockByHash works for them too.
 */
export async function startRecordedChain(options: RecordedChainOptions): Promise<RecordedChain> {
  const { chainId } = options;
  const recorded = new Map<number, RecordedTransaction>();
  for (const t of options.transactions) {
    const n = num(t.receipt.blockNumber);
    if (recorded.has(n)) throw new Error(`two recorded transactions in block ${n}`);
    recorded.set(n, t);
  }
  const head = Math.max(...recorded.keys()) + (options.blocksAfter ?? 3);
  const byHash = new Map(options.transactions.map((t) => [t.tx.hash.toLowerCase(), t]));

  const syntheticHash = (n: number): string => `0xfeedface${chainId.toString(16).padStart(24, '0')}${n.toString(16).padStart(32, '0')}`;
  const hashOf = (n: number): string => recorded.get(n)?.receipt.blockHash.toLowerCase() ?? syntheticHash(n);
  const numberOfHash = (h: string): number | null => {
    const lower = h.toLowerCase();
    for (const [n, t] of recorded) if (t.receipt.blockHash.toLowerCase() === lower) return n;
    if (!lower.startsWith(syntheticHash(0).slice(0, 34))) return null;
    const n = num(lower.slice(34));
    return n <= head ? n : null;
  };

  // Timestamps: the recorded one where logs carry blockTimestamp (recent nodes return it), else an
  // estimate (mainnet's slot clock, or 12 s blocks before the first recorded one's estimate);
  // other blocks are spaced from the nearest recorded block by the chain's block time.
  const anchor = [...recorded.values()][0]!;
  const recordedTime = anchor.receipt.logs.find((l) => l.blockTimestamp)?.blockTimestamp;
  const anchorBlock = num(anchor.receipt.blockNumber);
  const blockSeconds = chainId === 1 || chainId === 11155111 ? 12 : 2;
  const anchorTime = recordedTime
    ? num(recordedTime)
    : chainId === 1
      ? MAINNET_MERGE.time + (anchorBlock - MAINNET_MERGE.block) * MAINNET_MERGE.seconds
      : 1_735_689_600; // 2025-01-01: a plausible date for a chain we have no clock for
  const timeOf = (n: number): number => anchorTime + (n - anchorBlock) * blockSeconds;

  // baseFeePerGas: an EIP-1559 transaction pays min(maxFee, baseFee + priority), so the recorded
  // effectiveGasPrice minus its priority fee is the block's base fee (exact unless capped by maxFee).
  const baseFeeOf = (n: number): bigint => {
    const t = recorded.get(n) ?? anchor;
    const priority = t.tx.maxPriorityFeePerGas ? BigInt(t.tx.maxPriorityFeePerGas) : 0n;
    const base = BigInt(t.receipt.effectiveGasPrice) - priority;
    return base > 0n ? base : 1n;
  };

  const header = (n: number, fullTransactions = false): BlockHeader => {
    const t = recorded.get(n);
    return {
      number: hex(n),
      hash: hashOf(n),
      parentHash: n === 0 ? `0x${'0'.repeat(64)}` : hashOf(n - 1),
      timestamp: hex(timeOf(n)),
      baseFeePerGas: hex(baseFeeOf(n)),
      gasLimit: hex(30_000_000),
      gasUsed: t ? (t.receipt.cumulativeGasUsed ?? t.receipt.gasUsed) : '0x0',
      miner: `0x${'0'.repeat(40)}`,
      transactions: t ? [fullTransactions ? t.tx : t.tx.hash] : [],
    };
  };

  const blockParam = (p: unknown): number => {
    if (p === 'latest' || p === 'safe' || p === 'finalized' || p === 'pending' || p === undefined) return head;
    if (p === 'earliest') return 0;
    if (typeof p === 'string' && /^0x[0-9a-f]+$/i.test(p)) return num(p);
    throw new RpcFailure({ code: -32602, message: `invalid block parameter ${JSON.stringify(p)}` });
  };

  const topicMatches = (want: unknown, got: string | undefined): boolean => {
    if (want === null || want === undefined) return true;
    const options = (Array.isArray(want) ? want : [want]) as string[];
    return got !== undefined && options.some((o) => o.toLowerCase() === got.toLowerCase());
  };

  type LogFilter = { fromBlock?: string; toBlock?: string; blockHash?: string; address?: string | string[]; topics?: unknown[] };
  const getLogs = (filter: LogFilter): RecordedLog[] => {
    let from: number;
    let to: number;
    if (filter.blockHash) {
      const n = numberOfHash(filter.blockHash);
      if (n === null) throw new RpcFailure({ code: -32000, message: 'unknown block' });
      from = to = n;
    } else {
      from = blockParam(filter.fromBlock ?? 'latest');
      to = blockParam(filter.toBlock ?? 'latest');
    }
    const addresses =
      filter.address === undefined ? null : (Array.isArray(filter.address) ? filter.address : [filter.address]).map((a) => a.toLowerCase());
    const logs: RecordedLog[] = [];
    for (const [n, t] of [...recorded].sort((a, b) => a[0] - b[0])) {
      if (n < from || n > to) continue;
      for (const log of t.receipt.logs) {
        if (addresses && !addresses.includes(log.address.toLowerCase())) continue;
        if (!(filter.topics ?? []).every((want, i) => topicMatches(want, log.topics[i]))) continue;
        logs.push(log);
      }
    }
    return logs;
  };

  const noTrace = (method: string): RpcFailure =>
    new RpcFailure({ code: -32601, message: `the method ${method} does not exist/is not available` });

  const answer = (method: string, params: unknown[]): unknown => {
    switch (method) {
      case 'eth_chainId':
        return hex(chainId);
      case 'net_version':
        return String(chainId);
      case 'eth_blockNumber':
        return hex(head);
      case 'eth_getBlockByNumber': {
        const n = blockParam(params[0]);
        return n > head ? null : header(n, params[1] === true);
      }
      case 'eth_getBlockByHash': {
        const n = numberOfHash(String(params[0]));
        return n === null ? null : header(n, params[1] === true);
      }
      case 'eth_getLogs':
        return getLogs(params[0] ?? {});
      case 'eth_getTransactionByHash':
        return byHash.get(String(params[0]).toLowerCase())?.tx ?? null;
      case 'eth_getTransactionReceipt':
        return byHash.get(String(params[0]).toLowerCase())?.receipt ?? null;
      case 'eth_getBlockReceipts': {
        const p = String(params[0]);
        const n = p.length === 66 ? numberOfHash(p) : blockParam(p);
        if (n === null || n > head) return null;
        const t = recorded.get(n);
        return t ? [t.receipt] : [];
      }
      case 'debug_traceTransaction': {
        const t = byHash.get(String(params[0]).toLowerCase());
        const tracer = (params[1] as { tracer?: string } | undefined)?.tracer;
        if (tracer !== 'callTracer' || !t?.callTrace) {
          if (!t) throw new RpcFailure({ code: -32000, message: 'transaction not found' });
          throw noTrace(method);
        }
        return t.callTrace;
      }
      case 'trace_transaction': {
        const t = byHash.get(String(params[0]).toLowerCase());
        if (!t?.parityTrace) throw noTrace(method);
        return t.parityTrace;
      }
      case 'eth_call':
        // A recording holds no state to execute against: refused as a node without it would.
        throw new RpcFailure({
          code: -32601,
          message: 'the method eth_call does not exist/is not available (a recorded chain has no state)',
        });
      default:
        throw noTrace(method);
    }
  };

  const calls = new Map<string, number>();
  const reply = (m: RpcMessage): Record<string, unknown> => {
    const method = m.method ?? '';
    calls.set(method, (calls.get(method) ?? 0) + 1);
    try {
      return { jsonrpc: '2.0', id: m.id ?? null, result: answer(method, m.params ?? []) };
    } catch (err) {
      const error = err instanceof RpcFailure ? err.error : { code: -32603, message: (err as Error).message };
      return { jsonrpc: '2.0', id: m.id ?? null, error };
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: RpcMessage | RpcMessage[];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString()) as RpcMessage | RpcMessage[];
    } catch {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }));
      return;
    }
    const out = Array.isArray(body) ? body.map(reply) : reply(body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    head,
    header: (n) => header(n),
    calls,
    stop: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
