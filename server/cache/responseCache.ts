import { withinDeadline } from '../../shared/db/client.js';
import type { Logger } from '../../shared/log.js';
import { toJsonBody } from '../../shared/jsonText.js';
import { bodyOf, encodeEntry, NO_HEADS, parseHeader, supersedes } from './cacheEntry.js';
import { jitter } from './cachePolicy.js';
import type { CacheStore } from './cacheStore.js';

/**
 * Read-through cache of endpoint answers, stored as JSON bytes so that a hit is written to the
 * socket as is (no parse, no encoding). An entry (cacheEntry.ts) carries a tag, the final epochs
 * (cachePolicy.finalTag) for a final answer or the reorg epochs the answer was computed under, and
 * a hit under another tag counts as stale (a miss); head-dependent entries also carry the indexed
 * heads they were computed at, a hit computed at an older head than the reader's is stale too (the
 * indexer has moved: the answer may lack the new block, however long its TTL), and a fill never
 * replaces an entry computed from a newer state (a read replica behind another): it answers with
 * that newer entry instead, so an answer does not go backwards through the cache. With Redis, a
 * small in-process near cache holds entries read or written here for the rest of their TTL: the
 * same entries, so the same epoch check applies, and a hot key costs no round trip. Concurrent
 * fills of one key share one computation (single flight). Store failures are misses: the answer
 * then comes from Postgres and the caller never sees the error.
 */

export type CacheStats = {
  hits: number;
  misses: number;
  stale: number;
  errors: number;
  /** Fills whose answer was older than one stored meanwhile, and answered with the stored one (absent: never counted). */
  superseded?: number;
};

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

/**
 * The state an answer is computed under: reorg epochs (cachePolicy.epochTag), indexed heads
 * (headTag), and the tag final answers carry (finalTag).
 */
export type CacheState = { epoch: string; heads: string; final: string };

export type ResponseCache = {
  readonly kind: CacheStore['kind'];
  readonly stats: Readonly<CacheStats>;
  /** The answer stored under `key` and valid in `state` (same reorg or final epochs, computed at its heads or later), or null. */
  lookup(key: string, state: CacheState): Promise<Answer | null>;
  /**
   * Computes the answer and stores it, unless a newer one was stored meanwhile (then that one is the
   * answer); concurrent fills of one key share one computation.
   */
  fill(key: string, state: CacheState, compute: () => Promise<Computed>): Promise<Answer>;
};

/**
 * Parses an entry; null when it was written under another reorg epoch, or computed at an older
 * indexed head than the reader's (the indexer has moved since: the answer may lack the new blocks).
 */
function parseEntry(raw: Buffer, state: CacheState): { json: Buffer; expiresAt: number } | null {
  const header = parseHeader(raw);
  if (header.tag !== state.final && header.tag !== state.epoch) return null;
  if (supersedes({ tag: state.epoch, expiresAt: 0, heads: state.heads }, header)) return null;
  return { json: bodyOf(raw), expiresAt: header.expiresAt };
}

const maxAgeOf = (expiresAt: number) => Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));

export function createResponseCache(store: CacheStore, log: Logger, near?: CacheStore): ResponseCache {
  const stats: CacheStats = { hits: 0, misses: 0, stale: 0, errors: 0, superseded: 0 };
  const inflight = new Map<string, Promise<Answer>>();
  const keepNear = (key: string, entry: Buffer, expiresAt: number) => {
    const ttl = expiresAt - Date.now();
    if (near && ttl > 0) void near.put(key, entry, ttl);
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

  async function computeAndStore(key: string, state: CacheState, compute: () => Promise<Computed>): Promise<Answer> {
    const { value, final, ttlMs } = await compute();
    const ttl = jitter(ttlMs);
    const expiresAt = Date.now() + ttl;
    const header = final ? { tag: state.final, expiresAt, heads: NO_HEADS } : { tag: state.epoch, expiresAt, heads: state.heads };
    const entry = encodeEntry(header, toJsonBody(value));
    const computed: Answer = { json: bodyOf(entry), value, maxAgeSeconds: Math.floor(ttl / 1000), cache: 'miss' };
    const storing = store.put(key, entry, ttl);
    if (header.heads === NO_HEADS) {
      // Nothing can supersede it: no need to wait for the write.
      keepNear(key, entry, expiresAt);
      storing.catch((err: unknown) => {
        stats.errors++;
        log.debug({ err, key }, 'cache write failed');
      });
      return computed;
    }
    let newer: Buffer | null = null;
    try {
      newer = await storing;
    } catch (err) {
      stats.errors++;
      log.debug({ err, key }, 'cache write failed');
    }
    if (!newer) {
      keepNear(key, entry, expiresAt);
      return computed;
    }
    // Another process computed this answer from a newer state (another replica, the primary): ours is older.
    stats.superseded = (stats.superseded ?? 0) + 1;
    const stored = parseHeader(newer);
    keepNear(key, newer, stored.expiresAt);
    return { json: bodyOf(newer), maxAgeSeconds: maxAgeOf(stored.expiresAt), cache: 'miss' };
  }

  return {
    kind: store.kind,
    stats,
    async lookup(key, state) {
      const { raw, remote } = await getRaw(key);
      const entry = raw === null ? null : parseEntry(raw, state);
      if (raw !== null && entry === null) stats.stale++;
      if (entry === null) {
        stats.misses++;
        return null;
      }
      stats.hits++;
      if (remote) keepNear(key, raw!, entry.expiresAt);
      return { json: entry.json, maxAgeSeconds: maxAgeOf(entry.expiresAt), cache: 'hit' };
    },
    fill(key, state, compute) {
      const flightKey = `${state.epoch}|${state.heads}|${key}`;
      const running = inflight.get(flightKey);
      // The computation is the first caller's, due by its deadline; another waits no longer than its own.
      if (running) return withinDeadline(running);
      const flight = computeAndStore(key, state, compute).finally(() => inflight.delete(flightKey));
      inflight.set(flightKey, flight);
      return flight;
    },
  };
}
