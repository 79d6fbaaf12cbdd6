import type { Queryable } from '../../shared/db/client.js';
import { walletListKey, type HeldWalletLists, type RecentDay } from '../../shared/db/tables/dailyStats.js';

/**
 * The active wallets of closed days, as the JSON text getDailyMetrics answers, kept by the web
 * process after it first reads them. A week is ~20,000 addresses (~800 KB) at a million ops a
 * year, and reading, converting and sending them was most of an uncached call's work, in
 * PostgreSQL and in Node alike, for lists that no longer change: a closed day's list changes only
 * when its count does (wallets added to a past day, which a chain's block times rule out) or in a
 * reorg, which moves the network's reorg epoch. So a list is kept under its day and count and
 * valid while the epoch read with it stays; the latest day's is read every time.
 */

/** Characters kept per database (one byte each: addresses are ASCII). The least recently used lists go first. */
const KEPT_CHARS = 32 * 1024 * 1024;

type NetworkLists = { epoch: number; byKey: Map<string, string> };

class ClosedDayWallets {
  private readonly networks = new Map<number, NetworkLists>();
  private chars = 0;

  /** The lists held for the network: what listRecent need not read, and their texts. */
  held(chainId: number): { held: HeldWalletLists | null; texts: ReadonlyMap<string, string> } {
    const lists = this.networks.get(chainId);
    if (!lists) return { held: null, texts: new Map() };
    // A snapshot: lists dropped while the read runs are still answered from it.
    const texts = new Map(lists.byKey);
    return { held: { epoch: lists.epoch, keys: [...texts.keys()] }, texts };
  }

  /** Keeps the closed days' lists just read under `epoch`; lists of another epoch are dropped. */
  keep(chainId: number, epoch: number, days: readonly RecentDay[]): void {
    let lists = this.networks.get(chainId);
    if (lists && lists.epoch !== epoch) {
      for (const text of lists.byKey.values()) this.chars -= text.length;
      lists = undefined;
    }
    if (!lists) this.networks.set(chainId, (lists = { epoch, byKey: new Map() }));
    for (const day of days) {
      if (!day.closed || day.activeWalletsJson === null) continue;
      const key = walletListKey(day.counts.daySinceEpoch, day.counts.activeWalletsDaily);
      if (lists.byKey.has(key)) continue;
      lists.byKey.set(key, day.activeWalletsJson);
      this.chars += day.activeWalletsJson.length;
    }
    this.evict();
  }

  /** Marks the lists as just used (kept longest). */
  touch(chainId: number, keys: readonly string[]): void {
    const lists = this.networks.get(chainId);
    if (!lists) return;
    for (const key of keys) {
      const text = lists.byKey.get(key);
      if (text === undefined) continue;
      lists.byKey.delete(key);
      lists.byKey.set(key, text);
    }
  }

  private evict(): void {
    for (const lists of this.networks.values()) {
      for (const [key, text] of lists.byKey) {
        if (this.chars <= KEPT_CHARS) return;
        lists.byKey.delete(key);
        this.chars -= text.length;
      }
    }
  }
}

/** One per database (the primary, each replica; each test database): lists of one are never answered from another. */
const byDatabase = new WeakMap<Queryable, ClosedDayWallets>();

export function closedDayWalletsOf(db: Queryable): ClosedDayWallets {
  let lists = byDatabase.get(db);
  if (!lists) byDatabase.set(db, (lists = new ClosedDayWallets()));
  return lists;
}
