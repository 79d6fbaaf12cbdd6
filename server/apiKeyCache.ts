import { hashApiKey } from '../shared/apiKeys.js';
import type { Queryable } from '../shared/db/client.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import type { ApiKey } from '../shared/db/tables/apiKeys.js';

/**
 * API keys looked up by hash, remembered in-process so that a cached answer costs no database
 * round trip: 30 s for a found key, 5 s for an unknown one. A revocation therefore takes effect
 * within 30 s on every web process.
 */
export type ApiKeyCache = { find(db: Queryable, key: string): Promise<ApiKey | null> };

const FOUND_TTL_MS = 30_000;
const MISSING_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export function createApiKeyCache(): ApiKeyCache {
  const entries = new Map<string, { key: ApiKey | null; expiresAt: number }>();
  return {
    async find(db, key) {
      // Keyed by the key as sent: a remembered key costs no hashing either.
      const cached = entries.get(key);
      if (cached && cached.expiresAt > Date.now()) return cached.key;
      const found = await apiKeys.findByHash(db, hashApiKey(key));
      entries.delete(key);
      entries.set(key, { key: found, expiresAt: Date.now() + (found ? FOUND_TTL_MS : MISSING_TTL_MS) });
      if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      return found;
    },
  };
}
