import type { Cluster, Redis } from 'ioredis';
import { parseHeader, supersedes } from './cacheEntry.js';

/**
 * Where cached answers live: Redis (one server or a cluster) when configured, else a bounded
 * in-process map. Values are the bytes written to the socket on a hit (no string conversion on the
 * way out). Every command touches one key, so on a cluster each goes to the one node that owns it.
 */
export interface CacheStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<Buffer | null>;
  /**
   * Stores `entry` for `ttlMs` unless the entry stored under `key` was computed from a newer state
   * (cacheEntry.supersedes); then that newer entry is kept and returned. Null: `entry` is stored.
   */
  put(key: string, entry: Buffer, ttlMs: number): Promise<Buffer | null>;
}

/**
 * cacheEntry.supersedes, run where the entry is, so that no other writer can slip in between the
 * comparison and the write. KEYS[1]: the entry; ARGV: entry, ttl ms, its tag, its heads.
 */
const PUT_ENTRY_LUA = `
local stored = redis.call('GET', KEYS[1])
if stored and ARGV[4] ~= '-' then
  local tag, heads = string.match(string.match(stored, '^[^\\n]*'), '^(%S+) %S+ (%S+)$')
  if tag and heads ~= '-' then
    local function numbers(s)
      local t = {}
      for n in string.gmatch(string.sub(s, 2), '[^.]+') do t[#t + 1] = tonumber(n) or 0 end
      return t
    end
    local se, ce, sh, ch = numbers(tag), numbers(ARGV[3]), numbers(heads), numbers(ARGV[4])
    if #se == #ce and #sh == #ch and #se == #sh then
      local further, behind = false, false
      for i = 1, #se do
        local order = se[i] - ce[i]
        if order == 0 then order = sh[i] - ch[i] end
        if order < 0 then behind = true elseif order > 0 then further = true end
      end
      if further and not behind then return stored end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

type WithPutEntry = {
  opscanPutEntryBuffer(key: string, entry: Buffer, ttlMs: number, tag: string, heads: string): Promise<Buffer | null>;
};

export function createRedisStore(redis: Redis | Cluster, prefix: string): CacheStore {
  // Sent once per connection as EVALSHA (ioredis loads it on NOSCRIPT, also on each cluster node).
  redis.defineCommand('opscanPutEntry', { numberOfKeys: 1, lua: PUT_ENTRY_LUA });
  const scripted = redis as (Redis | Cluster) & WithPutEntry;
  return {
    kind: 'redis',
    get: (key) => redis.getBuffer(prefix + key),
    put(key, entry, ttlMs) {
      const { tag, heads } = parseHeader(entry);
      return scripted.opscanPutEntryBuffer(prefix + key, entry, Math.max(1, Math.round(ttlMs)), tag, heads);
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
  const get = (key: string): Buffer | null => {
    const entry = entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt > Date.now()) return entry.value;
    drop(key);
    return null;
  };
  return {
    kind: 'memory',
    get: (key) => Promise.resolve(get(key)),
    put(key, value, ttlMs) {
      const stored = get(key);
      if (stored && supersedes(parseHeader(stored), parseHeader(value))) return Promise.resolve(stored);
      if (value.length > maxBytes / 4) return Promise.resolve(null);
      drop(key);
      entries.set(key, { value, expiresAt: Date.now() + ttlMs });
      bytes += value.length;
      while (bytes > maxBytes) drop(entries.keys().next().value!);
      return Promise.resolve(null);
    },
  };
}
