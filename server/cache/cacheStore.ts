import type { Redis } from 'ioredis';

/**
 * Where cached answers live: Redis when configured, else a bounded in-process map. Values are the
 * bytes written to the socket on a hit (no string conversion on the way out).
 */
export interface CacheStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<Buffer | null>;
  set(key: string, value: Buffer, ttlMs: number): Promise<void>;
}

export function createRedisStore(redis: Redis, prefix: string): CacheStore {
  return {
    kind: 'redis',
    get: (key) => redis.getBuffer(prefix + key),
    async set(key, value, ttlMs) {
      await redis.set(prefix + key, value, 'PX', ttlMs);
    },
  };
}

/**
 * In-process store: the cache of deployments without Redis, and the near cache in front of Redis.
 * Entries expire lazily; past `maxBytes` of values the oldest insertions are dropped (Map keeps
 * insertion order), which bounds memory whatever the answers' sizes.
 */
export function createMemoryStore(maxBytes = 64 * 1024 * 1024): CacheStore {
  const entries = new Map<string, { value: Buffer; expiresAt: number }>();
  let bytes = 0;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.value.length;
    entries.delete(key);
  };
  return {
    kind: 'memory',
    async get(key) {
      const entry = entries.get(key);
      if (!entry) return null;
      if (entry.expiresAt > Date.now()) return entry.value;
      drop(key);
      return null;
    },
    async set(key, value, ttlMs) {
      if (value.length > maxBytes / 4) return;
      drop(key);
      entries.set(key, { value, expiresAt: Date.now() + ttlMs });
      bytes += value.length;
      while (bytes > maxBytes) drop(entries.keys().next().value!);
    },
  };
}
