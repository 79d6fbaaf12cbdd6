/**
 * The simulated chain as data: headers, transactions, receipts and logs of any block, generated on
 * demand (plan.ts, materialize.ts) and kept in a cache bounded by the logs it holds, whatever range
 * is asked. Nothing here knows about time or the head (server.ts decides what exists).
 */
import type { EpVersion } from '../devnet/userop.js';
import { ActorKind, actorAddress, blockHash, filler32, locateTransaction, quantity, transactionHash } from './ids.js';
import { EMPTY_BLOOM, Materializer, type JsonLog, type SimTx } from './materialize.js';
import { ChainPlan, type Skeleton } from './plan.js';
import type { Profile } from './profiles.js';
import { CANONICAL_ENTRYPOINTS } from '../shared/chain/constants.js';

export type ChainOptions = {
  profile: Profile;
  seed?: number;
  /** Established smart accounts (the profile's by default). */
  accounts?: number;
  /** Logs carry blockTimestamp, as geth ≥ 1.16 and reth answer (default true). */
  logTimestamps?: boolean;
  /** Materialized logs the cache keeps (default 300,000: about 300 Base-like blocks). */
  cacheLogs?: number;
};

/** eth_getLogs' filter, parsed: lower-case addresses, positional topics (null: any). */
export type LogFilter = { fromBlock: number; toBlock: number; addresses: Set<string> | null; topics: Array<Set<string> | null> };

type BlockEntry = { sk: Skeleton; txs: Array<SimTx | undefined>; weight: number; headers: [Header?, Header?] };

type Header = Record<string, unknown>;

const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';

export class SimChainModel {
  readonly plan: ChainPlan;
  readonly materializer: Materializer;
  readonly profile: Profile;
  readonly seed: number;
  readonly entryPoints: Record<EpVersion, string>;
  private readonly entryPointSet: Set<string>;
  private readonly blocks = new Map<number, BlockEntry>();
  private weight = 0;
  private maxWeight: number;
  /** Blocks and transactions materialized (a cache miss each), for stats. */
  readonly counters = { skeletons: 0, transactions: 0 };
  /**
   * The JSON text of what the cache holds (headers, transactions, receipts, logs), made the first
   * time it is served: a history read twice, or a header asked for by several ranges, is
   * serialised once. Weak: what the cache evicts takes its text with it.
   */
  private readonly texts = new WeakMap<object, string>();

  constructor(options: ChainOptions) {
    this.profile = options.profile;
    this.seed = options.seed ?? 1;
    this.plan = new ChainPlan(options.profile, this.seed, options.accounts ?? options.profile.accounts);
    this.materializer = new Materializer(this.plan, options.logTimestamps ?? true);
    this.maxWeight = options.cacheLogs ?? 300_000;
    this.entryPoints = {
      'v0.6': CANONICAL_ENTRYPOINTS['v0.6'],
      'v0.7': CANONICAL_ENTRYPOINTS['v0.7'],
      'v0.8': CANONICAL_ENTRYPOINTS['v0.8'],
    };
    // Every canonical EntryPoint, v0.9 too (none of its bundles are made, but opscan asks for its
    // logs): a filter of EntryPoints only reads bundle slots, never the filler's ~1,000 logs a block.
    this.entryPointSet = new Set(Object.values(CANONICAL_ENTRYPOINTS));
  }

  get chainId(): number {
    return this.profile.chainId;
  }

  private entry(n: number): BlockEntry {
    let e = this.blocks.get(n);
    if (e) {
      this.blocks.delete(n);
      this.blocks.set(n, e);
      return e;
    }
    this.counters.skeletons++;
    const sk = this.plan.skeleton(n);
    e = { sk, txs: new Array<SimTx | undefined>(sk.slots.length), weight: 1, headers: [] };
    this.blocks.set(n, e);
    this.weight += 1;
    this.evict(n);
    return e;
  }

  private evict(keep: number): void {
    for (const [n, e] of this.blocks) {
      if (this.weight <= this.maxWeight) return;
      if (n === keep) continue;
      this.blocks.delete(n);
      this.weight -= e.weight;
    }
  }

  skeleton(n: number): Skeleton {
    return this.entry(n).sk;
  }

  transaction(n: number, index: number): SimTx {
    const e = this.entry(n);
    let tx = e.txs[index];
    if (!tx) {
      this.counters.transactions++;
      tx = e.txs[index] = this.materializer.slot(e.sk, index);
      const w = 1 + tx.receipt.logs.length;
      e.weight += w;
      this.weight += w;
      this.evict(n);
    }
    return tx;
  }

  /** Every transaction of block n. */
  transactions(n: number): SimTx[] {
    return this.skeleton(n).slots.map((_, i) => this.transaction(n, i));
  }

  /** The transaction `hash` names, if this chain made it (any block: the caller checks the head). */
  locate(hash: string): { block: number; index: number } | null {
    const at = locateTransaction(this.seed, hash);
    if (!at || at.block < 0) return null;
    return at.index < this.skeleton(at.block).slots.length ? at : null;
  }

  /** The header of block n (with its transactions when `full`): the same object while the block is cached. */
  header(n: number, full: boolean): Header {
    const e = this.entry(n);
    return (e.headers[full ? 1 : 0] ??= this.makeHeader(n, full));
  }

  /**
   * The JSON text of an answer: the objects this model made (headers, transactions, receipts,
   * logs) from their cached text, arrays element by element, anything else by JSON.stringify.
   */
  json(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map((v) => this.json(v)).join(',')}]`;
    if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
    let text = this.texts.get(value);
    if (text === undefined) this.texts.set(value, (text = JSON.stringify(value)));
    return text;
  }

  /**
   * Materializes blocks [from, to] and their JSON ahead of serving, kept whatever cacheLogs says:
   * every transaction (`all`), or only bundle transactions (`bundles`: what INDEXER_TRANSFERS=ops
   * reads). A bench's history is then served from memory, at the cost of the generator's time up front.
   */
  precompute(from: number, to: number, what: 'all' | 'bundles'): void {
    this.maxWeight = Infinity;
    for (let n = from; n <= to; n++) {
      const e = this.entry(n);
      this.json(this.header(n, false));
      e.sk.slots.forEach((slot, i) => {
        if (what === 'bundles' && slot.kind !== 'bundle') return;
        const tx = this.transaction(n, i);
        this.json(tx.tx);
        this.json(tx.receipt);
        for (const log of tx.receipt.logs) this.json(log);
      });
    }
  }

  private makeHeader(n: number, full: boolean): Header {
    const sk = this.skeleton(n);
    const seed = this.seed;
    const gasLimit = sk.gasUsed * 2n > 30_000_000n ? sk.gasUsed * 2n : 30_000_000n;
    return {
      number: quantity(n),
      hash: blockHash(seed, n),
      parentHash: blockHash(seed, n - 1),
      nonce: '0x0000000000000000',
      sha3Uncles: EMPTY_UNCLES,
      logsBloom: EMPTY_BLOOM,
      transactionsRoot: `0x${filler32(seed, n, 0x71)}`,
      stateRoot: `0x${filler32(seed, n, 0x72)}`,
      receiptsRoot: `0x${filler32(seed, n, 0x73)}`,
      miner: actorAddress(seed, ActorKind.beneficiary, 1_000_000),
      difficulty: '0x0',
      totalDifficulty: '0x0',
      extraData: '0x',
      size: quantity(600 + sk.slots.length * 180 + sk.logCount * 200),
      gasLimit: quantity(gasLimit),
      gasUsed: quantity(sk.gasUsed),
      timestamp: quantity(sk.timestamp),
      baseFeePerGas: quantity(sk.baseFee),
      mixHash: `0x${filler32(seed, n, 0x74)}`,
      uncles: [],
      withdrawals: [],
      withdrawalsRoot: `0x${filler32(seed, n, 0x75)}`,
      transactions: full ? this.transactions(n).map((t) => t.tx) : sk.slots.map((_, i) => transactionHash(seed, n, i)),
    };
  }

  /** Logs matching `filter`; only the slots that can hold a match are materialized (EntryPoint filters: bundles only). */
  logs(filter: LogFilter, limit = Infinity): { logs: JsonLog[]; truncated: boolean } {
    const out: JsonLog[] = [];
    const onlyEntryPoints = filter.addresses !== null && [...filter.addresses].every((a) => this.entryPointSet.has(a));
    for (let n = filter.fromBlock; n <= filter.toBlock; n++) {
      const sk = this.skeleton(n);
      for (let i = 0; i < sk.slots.length; i++) {
        const slot = sk.slots[i]!;
        if (slot.logCount === 0 || (onlyEntryPoints && slot.kind !== 'bundle')) continue;
        for (const log of this.transaction(n, i).receipt.logs) {
          if (!matches(log, filter)) continue;
          if (out.length >= limit) return { logs: out, truncated: true };
          out.push(log);
        }
      }
    }
    return { logs: out, truncated: false };
  }

  /** How many logs of [from, to] match, counting only (for a provider's result cap, before building an answer). */
  countLogs(filter: LogFilter, cap: number): { count: number; lastFullBlock: number } {
    let count = 0;
    for (let n = filter.fromBlock; n <= filter.toBlock; n++) {
      count += this.logs({ ...filter, fromBlock: n, toBlock: n }).logs.length;
      if (count > cap) return { count, lastFullBlock: n > filter.fromBlock ? n - 1 : n };
    }
    return { count, lastFullBlock: filter.toBlock };
  }
}

function matches(log: JsonLog, f: LogFilter): boolean {
  if (f.addresses && !f.addresses.has(log.address)) return false;
  for (let i = 0; i < f.topics.length; i++) {
    const want = f.topics[i];
    if (!want) continue;
    const t = log.topics[i];
    if (t === undefined || !want.has(t)) return false;
  }
  return true;
}
