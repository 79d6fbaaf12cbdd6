import type { Logger } from '../../shared/log.js';
import { ANY_EPOCH, jitter } from './cachePolicy.js';
import type { CacheStore } from './cacheStore.js';

/**
 * Read-through cache of endpoint answers, stored as JSON text so that a hit is written to the
 * socket without parsing. An entry is `<tag> <expiresAtMs>\n<json>`: the tag is ANY_EPOCH or the
 * reorg epochs the answer was computed under, and a hit under another epoch counts as stale (a
 * miss). Concurrent misses of one key share one computation (single flight). Store failures are
 * misses: the answer then comes from Postgres and the caller never sees the error.
 */

export type CacheStats = { hits: number; misses: number; stale: number; errors: number };

export type Answer = {
  /** The JSON body, when it is at hand as text (a cache hit, or just stored). */
  text?: string;
  /** The value, when it was just computed (saves a parse for tRPC). */
  value?: unknown;
  /** Seconds the answer stays valid (for Cache-Control). */
  maxAgeSeconds: number;
  cache: 'hit' | 'miss' | 'none';
};

export type Computed = { value: unknown; final: boolean; ttlMs: number };

export type ResponseCache = {
  readonly kind: CacheStore['kind'];
  readonly stats: Readonly<CacheStats>;
  remember(key: string, epoch: string, compute: () => Promise<Computed>): Promise<Answer>;
};

export function createResponseCache(store: CacheStore, log: Logger): ResponseCache {
  const stats: CacheStats = { hits: 0, misses: 0, stale: 0, errors: 0 };
  const inflight = new Map<string, Promise<Answer>>();

  async function read(key: string, epoch: string): Promise<Answer | null> {
    let raw: string | null;
    try {
      raw = await store.get(key);
    } catch {
      stats.errors++;
      return null;
    }
    if (raw === null) return null;
    const newline = raw.indexOf('\n');
    const [tag, expiresAt] = raw.slice(0, newline).split(' ');
    if (tag !== ANY_EPOCH && tag !== epoch) {
      stats.stale++;
      return null;
    }
    const maxAgeSeconds = Math.max(0, Math.floor((Number(expiresAt) - Date.now()) / 1000));
    return { text: raw.slice(newline + 1), maxAgeSeconds, cache: 'hit' };
  }

  async function computeAndStore(key: string, epoch: string, compute: () => Promise<Computed>): Promise<Answer> {
    const { value, final, ttlMs } = await compute();
    const text = JSON.stringify(value);
    const ttl = jitter(ttlMs);
    const entry = `${final ? ANY_EPOCH : epoch} ${Date.now() + ttl}\n${text}`;
    store.set(key, entry, ttl).catch((err: unknown) => {
      stats.errors++;
      log.debug({ err, key }, 'cache write failed');
    });
    return { text, value, maxAgeSeconds: Math.floor(ttl / 1000), cache: 'miss' };
  }

  return {
    kind: store.kind,
    stats,
    async remember(key, epoch, compute) {
      const hit = await read(key, epoch);
      if (hit) {
        stats.hits++;
        return hit;
      }
      stats.misses++;
      const flightKey = `${epoch}|${key}`;
      const running = inflight.get(flightKey);
      if (running) return running;
      const flight = computeAndStore(key, epoch, compute).finally(() => inflight.delete(flightKey));
      inflight.set(flightKey, flight);
      return flight;
    },
  };
}
