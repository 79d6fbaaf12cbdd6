import type { Queryable } from '../../shared/db/client.js';
import { walletListKey, type HeldWalletLists, type RecentDay } from '../../shared/db/tables/dailyStats.js';

/**
 * The days' active wallets, as the JSON bytes getDailyMetrics answers, kept by the web process after
 * it first reads them. A week is ~20,000 addresses (~800 KB) at a million ops a year, and reading,
 * converting and sending them was most of an uncached call's work, in PostgreSQL and in Node alike.
 * A day's list changes only when its count does (wallets are only added, each with its count, in
 * the indexer's block transaction) or in a reorg, which moves the network's reorg epoch. So a list
 * is kept under its day and count, valid while the epoch read with it stays: a past day's for good,
 * the latest day's until its next new wallet.
 */

/** Bytes kept per database. The least recently used lists go first. */
const KEPT_BYTES = 32 * 1024 * 1024;

type HeldList = { count: string; json: Buffer };
type NetworkLists = { epoch: number; byDay: Map<string, HeldList> };

class DayWalletLists {
  private readonly networks = new Map<number, NetworkLists>();
  private bytes = 0;

  /**
   * The lists held for the network: what listRecent need not read, and their bytes by day (a day
   * listRecent leaves without its list is one of these, at the count held).
   */
  held(chainId: number): { held: HeldWalletLists | null; lists: ReadonlyMap<string, Buffer> } {
    const network = this.networks.get(chainId);
    if (!network) return { held: null, lists: new Map() };
    // A snapshot: lists dropped or replaced while the read runs are still answered from it.
    const keys: string[] = [];
    const lists = new Map<string, Buffer>();
    for (const [day, { count, json }] of network.byDay) {
      keys.push(walletListKey(day, count));
      lists.set(day, json);
    }
    return { held: { epoch: network.epoch, keys }, lists };
  }

  /**
   * Keeps the lists just read under `epoch`, in place of a day's list of a lower count; lists of
   * another epoch are dropped. (Within an epoch counts only grow: a lower one is a slower, older read.)
   */
  keep(chainId: number, epoch: number, days: readonly RecentDay[]): void {
    let network = this.networks.get(chainId);
    if (network && network.epoch !== epoch) {
      for (const { json } of network.byDay.values()) this.bytes -= json.length;
      network = undefined;
    }
    if (!network) this.networks.set(chainId, (network = { epoch, byDay: new Map() }));
    for (const { counts, activeWalletsJson: json } of days) {
      if (json === null) continue;
      const day = counts.daySinceEpoch;
      const held = network.byDay.get(day);
      if (held && BigInt(held.count) >= BigInt(counts.activeWalletsDaily)) continue;
      if (held) this.bytes -= held.json.length;
      network.byDay.delete(day);
      network.byDay.set(day, { count: counts.activeWalletsDaily, json });
      this.bytes += json.length;
    }
    this.evict();
  }

  /** Marks the days' lists as just used (kept longest). */
  touch(chainId: number, days: readonly string[]): void {
    const network = this.networks.get(chainId);
    if (!network) return;
    for (const day of days) {
      const held = network.byDay.get(day);
      if (!held) continue;
      network.byDay.delete(day);
      network.byDay.set(day, held);
    }
  }

  private evict(): void {
    for (const network of this.networks.values()) {
      for (const [day, { json }] of network.byDay) {
        if (this.bytes <= KEPT_BYTES) return;
        network.byDay.delete(day);
        this.bytes -= json.length;
      }
    }
  }
}

/** One per database (the primary, each replica; each test database): lists of one are never answered from another. */
const byDatabase = new WeakMap<Queryable, DayWalletLists>();

export function dayWalletListsOf(db: Queryable): DayWalletLists {
  let lists = byDatabase.get(db);
  if (!lists) byDatabase.set(db, (lists = new DayWalletLists()));
  return lists;
}
