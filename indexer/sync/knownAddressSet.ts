/**
 * INDEXER_TRANSFERS=known: which addresses are known on a network, without holding them on the heap.
 * A Bloom filter answers "certainly not" for nearly every party of a chain's token logs; the few it
 * lets through (known ones and ~1 % false positives) are looked up in the table in one query per
 * range. Addresses made known by ranges decoded but not yet committed are held apart
 * (`uncommitted`) until their batch commits, so a later range sees them whatever the table says yet.
 * 10 million known addresses: a 27 MB filter instead of a ~1 GB Set.
 *
 * The filter is stored (known_address_filters) whenever `saveAfterAddresses` addresses were added
 * since it last was, with the cursor as its through_block, so a start reads one value and only the
 * addresses first seen above that block, instead of every address (10 million: 200 MB read and
 * hashed, 20–30 s). What makes a stored filter complete: the filter in memory holds every address
 * of the table (the table's at load, then each one a decoded range makes known, before its batch
 * commits); it is saved only between passes, when no batch is being written, so every address
 * first seen at or below the cursor is in it; and an address first seen at or below through_block
 * later can only come from a reorg below it, which lowers through_block in its own transaction
 * (knownAddresses.deleteAbove). A filter stored under another layout, or none, is built from the
 * whole table.
 */
import type { Db } from '../../shared/db/client.js';
import * as knownAddressFilters from '../../shared/db/tables/knownAddressFilters.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import * as knownAddresses from '../../shared/db/tables/knownAddresses.js';
import { ADDRESS_HEX_DIGITS } from '../../shared/models/primitives.js';
import { GrowingAddressFilter } from './addressBloomFilter.js';

/** Addresses read per query while the filter is built. */
const PAGE = 500_000;
/** The filter's first stage; it grows by stages (GrowingAddressFilter). */
const FIRST_CAPACITY = 1_000_000;

/**
 * What load() read: how many addresses the filter holds, its size, whether it was stored (and how
 * long reading the stored one took), and the addresses read from the table.
 */
export type KnownAddressesLoaded = { addresses: number; filterBytes: number; stored: boolean; storedMs: number; readAddresses: number };

export class KnownAddressSet {
  private filter = new GrowingAddressFilter(FIRST_CAPACITY);
  /** Made known by a decoded range whose batch has not committed yet (address → batches holding it). */
  private readonly uncommitted = new Map<string, number>();
  /** Addresses added to the filter since it was last stored (or read from the table at load). */
  private unsaved = 0;

  constructor(
    private readonly db: Db,
    private readonly chainId: number,
    private readonly saveAfterAddresses = 50_000,
  ) {}

  /** Builds the filter, once, before any range is decoded: the stored one and the addresses above it, else the whole table. */
  async load(): Promise<KnownAddressesLoaded> {
    const t0 = performance.now();
    const stored = await knownAddressFilters.find(this.db, this.chainId);
    const fromStored = stored && GrowingAddressFilter.fromStored(stored);
    const storedMs = Math.round(performance.now() - t0);
    const filter = fromStored ?? new GrowingAddressFilter(FIRST_CAPACITY);
    const add = (hex: string): void => {
      for (let at = 0; at < hex.length; at += ADDRESS_HEX_DIGITS) filter.add(`0x${hex.slice(at, at + ADDRESS_HEX_DIGITS)}`);
    };
    let read = 0;
    if (fromStored) {
      for (let after: knownAddresses.FirstSeen | null = null; ;) {
        const page = await knownAddresses.listFirstSeenAbove(this.db, this.chainId, {
          aboveBlock: stored.throughBlock,
          after,
          limit: PAGE,
        });
        if (page.count === 0) break;
        add(page.hex);
        read += page.count;
        after = page.last;
      }
    } else {
      for (let after: string | null = null; ;) {
        const page = await knownAddresses.listPage(this.db, this.chainId, after, PAGE);
        if (page.count === 0) break;
        add(page.hex);
        read += page.count;
        after = page.last;
      }
    }
    for (const a of this.uncommitted.keys()) filter.add(a);
    this.filter = filter;
    this.unsaved = read;
    return { addresses: filter.count, filterBytes: filter.bytes, stored: fromStored !== null, storedMs, readAddresses: read };
  }

  /** Whether `saveAfterAddresses` addresses were added since the filter was last stored. */
  get saveDue(): boolean {
    return this.unsaved >= this.saveAfterAddresses;
  }

  /**
   * Stores the filter when `saveAfterAddresses` were added since it last was. Only between passes,
   * when no batch is being written, with the cursor read at the pass's start: every address first
   * seen at or below it is committed and in the filter (see the header). The cursor's row is locked
   * and compared first, so a batch or rollback committed meanwhile (by another writer) leaves the
   * stored filter as it was (still complete through its own through_block); it is not due again
   * before as many addresses more. Resolves to whether it stored it.
   */
  async saveWhenDue(cursor: Pick<indexerState.Cursor, 'indexedBlock' | 'reorgEpoch'>): Promise<boolean> {
    if (!this.saveDue) return false;
    const unsaved = this.unsaved;
    const stored = { ...this.filter.toStored(), throughBlock: cursor.indexedBlock };
    const saved = await this.db.transaction(async (tx) => {
      const now = await indexerState.findCursor(tx, this.chainId, true);
      if (now?.indexedBlock !== cursor.indexedBlock || now.reorgEpoch !== cursor.reorgEpoch) return false;
      await knownAddressFilters.save(tx, this.chainId, stored);
      return true;
    });
    this.unsaved -= unsaved;
    return saved;
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

  /**
   * A decoded range made these known; they count from now on, before their batch commits. A range's
   * parties are mostly known already (the same paymasters and bundlers): the filter takes, and the
   * next save counts, only those it does not hold yet.
   */
  add(addresses: string[]): void {
    for (const a of addresses) {
      this.uncommitted.set(a, (this.uncommitted.get(a) ?? 0) + 1);
      if (this.filter.mayContain(a)) continue;
      this.filter.add(a);
      this.unsaved++;
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
