/**
 * INDEXER_TRANSFERS=known: which addresses are known on a network, without holding them on the heap.
 * A Bloom filter built from known_addresses at start answers "certainly not" for nearly every party
 * of a chain's token logs; the few it lets through (known ones and ~1 % false positives) are looked
 * up in the table in one query per range. Addresses made known by ranges decoded but not yet
 * committed are held apart (`uncommitted`) until their batch commits, so a later range sees them
 * whatever the table says yet. 10 million known addresses: a 24 MB filter instead of a ~1 GB Set,
 * and a start-up read of addresses × 40 hex digits, in pages of one value each.
 */
import type { Db } from '../../shared/db/client.js';
import * as knownAddresses from '../../shared/db/tables/knownAddresses.js';
import { ADDRESS_HEX_DIGITS } from '../../shared/models/primitives.js';
import { GrowingAddressFilter } from './addressBloomFilter.js';

/** Addresses read per query while the filter is built. */
const PAGE = 500_000;
/** The filter's first stage; it grows by stages (GrowingAddressFilter). */
const FIRST_CAPACITY = 1_000_000;

export class KnownAddressSet {
  private filter = new GrowingAddressFilter(FIRST_CAPACITY);
  /** Made known by a decoded range whose batch has not committed yet (address → batches holding it). */
  private readonly uncommitted = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly chainId: number,
  ) {}

  /** Builds the filter from the table, once, before any range is decoded. */
  async load(): Promise<{ addresses: number; filterBytes: number }> {
    const filter = new GrowingAddressFilter(FIRST_CAPACITY);
    for (let after: string | null = null; ;) {
      const page = await knownAddresses.listPage(this.db, this.chainId, after, PAGE);
      if (page.count === 0) break;
      for (let at = 0; at < page.hex.length; at += ADDRESS_HEX_DIGITS) filter.add(`0x${page.hex.slice(at, at + ADDRESS_HEX_DIGITS)}`);
      after = page.last;
    }
    for (const a of this.uncommitted.keys()) filter.add(a);
    this.filter = filter;
    return { addresses: filter.count, filterBytes: filter.bytes };
  }

  /** Whether `address` may be known (false: certainly not). */
  mayBeKnown(address: string): boolean {
    return this.uncommitted.has(address) || this.filter.mayContain(address);
  }

  /** The known ones among `candidates`: the filter first, the table for what it lets through. */
  async knownAmong(candidates: Iterable<string>): Promise<Set<string>> {
    const known = new Set<string>();
    const ask: string[] = [];
    for (const a of new Set(candidates)) {
      if (this.uncommitted.has(a)) known.add(a);
      else if (this.filter.mayContain(a)) ask.push(a);
    }
    for (const a of await knownAddresses.findKnown(this.db, this.chainId, ask)) known.add(a);
    return known;
  }

  /** A decoded range made these known; they count from now on, before their batch commits. */
  add(addresses: string[]): void {
    for (const a of addresses) {
      this.uncommitted.set(a, (this.uncommitted.get(a) ?? 0) + 1);
      this.filter.add(a);
    }
  }

  /** Their batch committed: the table holds them now. */
  committed(addresses: string[]): void {
    for (const a of addresses) {
      const n = (this.uncommitted.get(a) ?? 1) - 1;
      if (n <= 0) this.uncommitted.delete(a);
      else this.uncommitted.set(a, n);
    }
  }

  /** A reorg removed what was not committed (and the table's rows above the ancestor). */
  forgetUncommitted(): void {
    this.uncommitted.clear();
  }
}
