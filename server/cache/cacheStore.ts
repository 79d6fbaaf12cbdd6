import type { Redis } from 'ioredis';

/** Where cached answers live: Redis when configured, else a bounded in-process map. */
export interface CacheStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

export function createRedisStore(redis: Redis, prefix: string): CacheStore {
  return {
    kind: 'redis',
    get: (key) => redis.get(prefix + key),
    async set(key, value, ttlMs) {
      await redis.set(prefix + key, value, 'PX', ttlMs);
    },
  };
}

/**
 * In-process store for deployments without Redis. Entries expire lazily; past `maxEntries` the
 * oldest insertion is dropped (Map keeps insertion order), which bounds memory.
 */
export function createMemoryStore(maxEntries = 20_000): CacheStore {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  return {
    kind: 'memory',
    async get(key) {
      const entry = entries.get(key);
      if (!entry) return null;
      if (entry.expiresAt <= Date.now()) {
        entries.delete(key);
        return null;
      }
      return entry.value;
    },
    async set(key, value, ttlMs) {
      entries.delete(key);
      entries.set(key, { value, expiresAt: Date.now() + ttlMs });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
