/**
 * The JSON-RPC methods the simulator answers, over the chain model and a head (what exists now).
 * Answers follow geth: blocks and transactions beyond the head are null, unknown methods -32601,
 * bad parameters -32602 naming the argument. A plan's limits on eth_getLogs and the debug API
 * apply here; batch and rate limits apply per request in server.ts.
 */
import { AbiCoder } from 'ethers';
import { findNetworkByChainId } from '../shared/networks.js';
import type { LogFilter, SimChainModel } from './chain.js';
import { ActorKind, actorOf, blockNumberOfHash, quantity } from './ids.js';
import { methodNotFound, type Plan, type RpcErrorObject } from './plans.js';

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  static of(e: RpcErrorObject): RpcError {
    return new RpcError(e.code, e.message);
  }
}

export type Head = { current(): number };

const abi = AbiCoder.defaultAbiCoder();
const CONTRACT_CODE = '0x6080604052348015600f57600080fd5b506004361060285760003560e01c8063a9059cbb14602d575b600080fd5b';
const invalid = (index: number, what: string): RpcError => new RpcError(-32602, `invalid argument ${index}: ${what}`);

type Handler = (params: unknown[]) => unknown;

export function createMethods(model: SimChainModel, head: Head, plan: Plan): Map<string, Handler> {
  const depth = findNetworkByChainId(model.chainId)?.finalityDepth ?? 30;

  const blockTag = (value: unknown, index: number): number => {
    const h = head.current();
    if (value === undefined || value === 'latest' || value === 'pending') return h;
    if (value === 'earliest') return 0;
    if (value === 'finalized') return Math.max(0, h - depth);
    if (value === 'safe') return Math.max(0, h - Math.ceil(depth / 2));
    if (typeof value === 'string' && /^0x[0-9a-fA-F]{1,14}$/.test(value)) return Number.parseInt(value, 16);
    if (typeof value === 'object' && value && 'blockNumber' in value) return blockTag(value.blockNumber, index);
    throw invalid(index, `hex block number or tag expected, got ${JSON.stringify(value)}`);
  };
  const hash32 = (value: unknown, index: number): string => {
    if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value))
      throw invalid(index, `32-byte hex hash expected, got ${JSON.stringify(value)}`);
    return value.toLowerCase();
  };
  const address = (value: unknown, index: number): string => {
    if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value))
      throw invalid(index, `hex address expected, got ${JSON.stringify(value)}`);
    return value.toLowerCase();
  };
  const exists = (n: number): boolean => n >= 0 && n <= head.current();
  const located = (hash: string): { block: number; index: number } | null => {
    const at = model.locate(hash);
    return at && exists(at.block) ? at : null;
  };
  const blockOf = (n: number, full: unknown): unknown => (exists(n) ? model.header(n, full === true) : null);

  const logFilter = (raw: unknown): LogFilter => {
    if (!raw || typeof raw !== 'object') throw invalid(0, 'filter object expected');
    const f = raw as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; address?: unknown; topics?: unknown };
    let fromBlock: number;
    let toBlock: number;
    if (f.blockHash !== undefined) {
      const n = blockNumberOfHash(model.seed, hash32(f.blockHash, 0));
      if (n === null || !exists(n)) throw new RpcError(-32000, 'unknown block');
      fromBlock = toBlock = n;
    } else {
      fromBlock = blockTag(f.fromBlock, 0);
      toBlock = Math.min(blockTag(f.toBlock, 0), head.current());
      if (fromBlock > toBlock && fromBlock <= head.current()) throw invalid(0, 'invalid block range params (fromBlock > toBlock)');
    }
    const list = f.address === undefined || f.address === null ? null : Array.isArray(f.address) ? f.address : [f.address];
    const addresses = list ? new Set(list.map((a) => address(a, 0))) : null;
    if (f.topics !== undefined && f.topics !== null && !Array.isArray(f.topics)) throw invalid(0, 'topics must be an array');
    const topics = ((f.topics as unknown[] | undefined) ?? []).map((t) =>
      t === null ? null : new Set((Array.isArray(t) ? t : [t]).map((x) => hash32(x, 0))),
    );
    return { fromBlock, toBlock, addresses, topics };
  };

  const ethCall = (raw: unknown): string => {
    const call = raw as { to?: unknown; data?: unknown } | null;
    const to = address(call?.to, 0);
    const data =
      typeof call?.data === 'string'
        ? call.data
        : typeof (call as { input?: unknown })?.input === 'string'
          ? String((call as { input: string }).input)
          : '0x';
    const actor = actorOf(model.seed, to);
    const selector = data.slice(0, 10).toLowerCase();
    const names: Partial<Record<ActorKind, [string, string]>> = {
      [ActorKind.token]: ['Token', 'TK'],
      [ActorKind.spamToken]: ['Visit claim-rewards.example to claim', 'CLAIM'],
      [ActorKind.nft]: ['Collectible', 'NFT'],
    };
    const named = actor && names[actor.kind];
    if (!named) return '0x';
    if (selector === '0x06fdde03') return abi.encode(['string'], [`${named[0]} ${actor.id}`]);
    if (selector === '0x95d89b41') return abi.encode(['string'], [`${named[1]}${actor.id}`]);
    if (selector === '0x313ce567' && actor.kind !== ActorKind.nft) return abi.encode(['uint8'], [actor.id % 4 === 0 ? 6 : 18]);
    throw new RpcError(3, 'execution reverted', '0x');
  };

  const getLogs = (raw: unknown): unknown => {
    const filter = logFilter(raw);
    if (filter.fromBlock > filter.toBlock) return [];
    const blocks = filter.toBlock - filter.fromBlock + 1;
    if (plan.logRangeCap !== null && blocks > plan.logRangeCap)
      throw RpcError.of(plan.rangeError(filter.fromBlock, filter.toBlock, plan.logRangeCap));
    const cap = plan.logResultCap;
    if (cap === null || (plan.narrowRangeExempt !== null && blocks <= plan.narrowRangeExempt)) return model.logs(filter).logs;
    const { logs, truncated } = model.logs(filter, cap);
    if (!truncated) return logs;
    const { lastFullBlock } = model.countLogs(filter, cap);
    throw RpcError.of(plan.resultError(filter.fromBlock, filter.toBlock, lastFullBlock, cap));
  };

  const methods = new Map<string, Handler>([
    ['web3_clientVersion', () => 'opscan-simchain/0.1'],
    ['eth_chainId', () => quantity(model.chainId)],
    ['net_version', () => String(model.chainId)],
    ['eth_syncing', () => false],
    ['eth_blockNumber', () => quantity(head.current())],
    ['eth_gasPrice', () => quantity(model.skeleton(head.current()).baseFee * 2n)],
    ['eth_getBlockByNumber', ([tag, full]) => blockOf(blockTag(tag, 0), full)],
    [
      'eth_getBlockByHash',
      ([hash, full]) => {
        const n = blockNumberOfHash(model.seed, hash32(hash, 0));
        return n === null ? null : blockOf(n, full);
      },
    ],
    [
      'eth_getTransactionByHash',
      ([hash]) => {
        const at = located(hash32(hash, 0));
        return at ? model.transaction(at.block, at.index).tx : null;
      },
    ],
    [
      'eth_getTransactionReceipt',
      ([hash]) => {
        const at = located(hash32(hash, 0));
        return at ? model.transaction(at.block, at.index).receipt : null;
      },
    ],
    [
      'eth_getBlockReceipts',
      ([tag]) => {
        const n = typeof tag === 'string' && tag.length === 66 ? blockNumberOfHash(model.seed, tag.toLowerCase()) : blockTag(tag, 0);
        return n !== null && exists(n) ? model.transactions(n).map((t) => t.receipt) : null;
      },
    ],
    ['eth_getLogs', ([filter]) => getLogs(filter)],
    [
      'debug_traceTransaction',
      ([hash, options]) => {
        if (!plan.debug) throw RpcError.of(methodNotFound('debug_traceTransaction'));
        const tracer = (options as { tracer?: unknown } | undefined)?.tracer;
        if (tracer !== 'callTracer') throw invalid(1, 'only {"tracer":"callTracer"} is supported');
        const at = located(hash32(hash, 0));
        if (!at) throw new RpcError(-32000, `transaction ${String(hash)} not found`);
        return model.materializer.trace(model.transaction(at.block, at.index));
      },
    ],
    ['eth_call', ([call, tag]) => (blockTag(tag, 1), ethCall(call))],
    [
      'eth_getCode',
      ([addr, tag]) => {
        blockTag(tag, 1);
        const a = address(addr, 0);
        if (Object.values(model.entryPoints).includes(a)) return CONTRACT_CODE;
        const actor = actorOf(model.seed, a);
        const eoa =
          !actor ||
          actor.kind === ActorKind.holder ||
          actor.kind === ActorKind.bundler ||
          actor.kind === ActorKind.owner ||
          actor.kind === ActorKind.beneficiary;
        return eoa ? '0x' : CONTRACT_CODE;
      },
    ],
    [
      'eth_getBalance',
      ([addr, tag]) => (blockTag(tag, 1), quantity(BigInt(Number.parseInt(address(addr, 0).slice(-8), 16)) * 1_000_000_000_000n)),
    ],
    ['eth_getTransactionCount', ([addr, tag]) => (blockTag(tag, 1), address(addr, 0), quantity(blockTag(tag, 1) % 10_000))],
  ]);
  return methods;
}
