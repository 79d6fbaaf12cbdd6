import type { Logger } from '../../shared/log.js';
import { ANY_EPOCH, jitter } from './cachePolicy.js';
import type { CacheStore } from './cacheStore.js';

/**
 * Read-through cache of endpoint answers, stored as JSON bytes so that a hit is written to the
 * socket as is (no parse, no encoding). An entry is `<tag> <expiresAtMs>\n<json>`: the tag is ANY_EPOCH or the
 * reorg epochs the answer was computed under, and a hit under another epoch counts as stale (a
 * miss). With Redis, a small in-process near cache holds entries read or written here for the rest
 * of their TTL: the same entries, so the same epoch check applies, and a hot key costs no round
 * trip. Concurrent fills of one key share one computation (single flight). Store failures are
 * misses: the answer then comes from Postgres and the caller never sees the error.
 */

export type CacheStats = { hits: number; misses: number; stale: number; errors: number };

export type Answer = {
  /** The JSON body as bytes, when at hand (a cache hit, or just stored). */
  json?: Buffer;
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
  /** The answer stored under `key` and valid under `epoch`, or null. */
  lookup(key: string, epoch: string): Promise<Answer | null>;
  /** Computes the answer and stores it; concurrent fills of one key share one computation. */
  fill(key: string, epoch: string, compute: () => Promise<Computed>): Promise<Answer>;
};

const NEWLINE = 0x0a;

/** Parses an entry; null when it was written under another reorg epoch. */
function parseEntry(raw: Buffer, epoch: string): { json: Buffer; expiresAt: number } | null {
  const newline = raw.indexOf(NEWLINE);
  const [tag, expiresAt] = raw.subarray(0, newline).toString('latin1').split(' ');
  if (tag !== ANY_EPOCH && tag !== epoch) return null;
  return { json: raw.subarray(newline + 1), expiresAt: Number(expiresAt) };
}

export function createResponseCache(store: CacheStore, log: Logger, near?: CacheStore): ResponseCache {
  const stats: CacheStats = { hits: 0, misses: 0, stale: 0, errors: 0 };
  const inflight = new Map<string, Promise<Answer>>();
  const keepNear = (key: string, entry: Buffer, expiresAt: number) => {
    const ttl = expiresAt - Date.now();
    if (near && ttl > 0) void near.set(key, entry, ttl);
  };

  /** The raw entry, from the near cache when it has it (then `remote` is false). */
  async function getRaw(key: string): Promise<{ raw: Buffer | null; remote: boolean }> {
    const local = near ? await near.get(key) : null;
    if (local !== null) return { raw: local, remote: false };
    try {
      return { raw: await store.get(key), remote: true };
    } catch {
      stats.errors++;
      return { raw: null, remote: true };
    }
  }

  async function computeAndStore(key: string, epoch: string, compute: () => Promise<Computed>): Promise<Answer> {
    const { value, final, ttlMs } = await compute();
    const ttl = jitter(ttlMs);
    const expiresAt = Date.now() + ttl;
    const entry = Buffer.from(`${final ? ANY_EPOCH : epoch} ${expiresAt}\n${JSON.stringify(value)}`);
    keepNear(key, entry, expiresAt);
    store.set(key, entry, ttl).catch((err: unknown) => {
      stats.errors++;
      log.debug({ err, key }, 'cache write failed');
    });
    return { json: entry.subarray(entry.indexOf(NEWLINE) + 1), value, maxAgeSeconds: Math.floor(ttl / 1000), cache: 'miss' };
  }

  return {
    kind: store.kind,
    stats,
    async lookup(key, epoch) {
      const { raw, remote } = await getRaw(key);
      const entry = raw === null ? null : parseEntry(raw, epoch);
      if (raw !== null && entry === null) stats.stale++;
      if (entry === null) {
        stats.misses++;
        return null;
      }
      stats.hits++;
      if (remote) keepNear(key, raw!, entry.expiresAt);
      return { json: entry.json, maxAgeSeconds: Math.max(0, Math.floor((entry.expiresAt - Date.now()) / 1000)), cache: 'hit' };
    },
    fill(key, epoch, compute) {
      const flightKey = `${epoch}|${key}`;
      const running = inflight.get(flightKey);
      if (running) return running;
      const flight = computeAndStore(key, epoch, compute).finally(() => inflight.delete(flightKey));
      inflight.set(flightKey, flight);
      return flight;
    },
  };
}
