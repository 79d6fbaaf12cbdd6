import { hashApiKey } from '../shared/apiKeys.js';
import type { Queryable } from '../shared/db/client.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import type { ApiKey } from '../shared/db/tables/apiKeys.js';
import * as apiPlans from '../shared/db/tables/apiPlans.js';
import type { ApiPlan } from '../shared/db/tables/apiPlans.js';

/**
 * API keys looked up by hash, and their plans, remembered in-process so that a cached answer costs
 * no database round trip: 30 s for a found key or a plan, 5 s for an unknown key. Whoever changes a
 * key or a plan announces it (apiKeys.announceChange, a NOTIFY every web process LISTENs to, see
 * server/services.ts), and the process forgets it at once: a revocation, an expiry brought forward
 * or a plan change takes effect everywhere within a moment. The TTL is the safety net.
 */
export type ApiKeyCache = {
  find(db: Queryable, key: string): Promise<ApiKey | null>;
  /** The plan with this id (null if it is gone). */
  plan(db: Queryable, planId: string): Promise<ApiPlan | null>;
  /** Forgets the key with this id; '' forgets every key and plan (a plan changed, or notifications were lost). */
  forget(keyId: string): void;
};

const FOUND_TTL_MS = 30_000;
const MISSING_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export function createApiKeyCache(): ApiKeyCache {
  const entries = new Map<string, { key: ApiKey | null; expiresAt: number }>();
  const plans = new Map<string, { plan: ApiPlan | null; expiresAt: number }>();
  // Bumped by every forget: a lookup that started before it must not store what it read.
  let generation = 0;
  return {
    async find(db, key) {
      // Keyed by the key as sent: a remembered key costs no hashing either.
      const cached = entries.get(key);
      if (cached && cached.expiresAt > Date.now()) return cached.key;
      const started = generation;
      const found = await apiKeys.findByHash(db, hashApiKey(key));
      if (started !== generation) return found;
      entries.delete(key);
      entries.set(key, { key: found, expiresAt: Date.now() + (found ? FOUND_TTL_MS : MISSING_TTL_MS) });
      if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      return found;
    },
    async plan(db, planId) {
      const cached = plans.get(planId);
      if (cached && cached.expiresAt > Date.now()) return cached.plan;
      const started = generation;
      const plan = await apiPlans.findById(db, planId);
      if (started === generation) plans.set(planId, { plan, expiresAt: Date.now() + FOUND_TTL_MS });
      return plan;
    },
    forget(keyId) {
      generation++;
      if (keyId === '') {
        entries.clear();
        plans.clear();
        return;
      }
      // Entries are keyed by the key as sent, so the id is found by a scan (a change is rare).
      for (const [sent, entry] of entries) if (entry.key?.id === keyId) entries.delete(sent);
    },
  };
}
