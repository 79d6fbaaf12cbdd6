/**
 * The answers the admin operations share: a plan, a key (its prefix, never the key) and an issued
 * key (the key itself, shown once), as schemas, and how stored keys and plans are presented in them.
 */
import { z } from 'zod';
import type { Queryable } from '../../../shared/db/client.js';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { API_KEY_SCOPES, type ApiKey } from '../../../shared/db/tables/apiKeys.js';
import * as apiPlans from '../../../shared/db/tables/apiPlans.js';
import type { ApiPlan } from '../../../shared/db/tables/apiPlans.js';

export const dateOutput = z.iso.datetime();

export const planOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    rateLimitPerSecond: z.number().int(),
    burst: z.number().int(),
    requestsPerDay: z.number().int().nullable(),
    requestsPerMonth: z.number().int().nullable(),
    webhooksAllowed: z.number().int().nullable(),
    networks: z.array(z.string()).nullable(),
    createdAt: dateOutput,
    updatedAt: dateOutput,
  })
  .meta({ id: 'Plan' });

export const keyOutput = z
  .object({
    id: z.string(),
    prefix: z.string().describe('The first characters of the key, kept in clear to name it (the key is stored hashed).'),
    name: z.string(),
    plan: z.object({ id: z.string(), name: z.string() }).nullable(),
    rateLimitPerSecond: z.number().int().nullable(),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    networks: z.array(z.string()).nullable(),
    active: z.boolean().describe('Neither revoked nor past its expiry.'),
    createdAt: dateOutput,
    updatedAt: dateOutput,
    expiresAt: dateOutput.nullable(),
    revokedAt: dateOutput.nullable(),
    lastUsedAt: dateOutput.nullable(),
    replacedBy: z.string().nullable().describe('The id of the key that replaced this one by rotation.'),
  })
  .meta({ id: 'ApiKey' });

export const issuedKeyOutput = z
  .object({
    apiKey: keyOutput,
    key: z.string().describe('The key itself: shown only in this answer (only its hash is stored).'),
  })
  .meta({ id: 'IssuedApiKey' });

type PlanOut = z.input<typeof planOutput>;
type KeyOut = z.input<typeof keyOutput>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentPlan(p: ApiPlan): PlanOut {
  return { ...p, createdAt: p.createdAt.toISOString(), updatedAt: p.updatedAt.toISOString() };
}

export async function presentKeys(db: Queryable, keys: ApiKey[]): Promise<KeyOut[]> {
  const plans = new Map((await apiPlans.list(db)).map((p) => [p.id, p]));
  const now = new Date();
  return keys.map((k) => {
    const plan = k.planId ? plans.get(k.planId) : undefined;
    return {
      id: k.id,
      prefix: k.prefix,
      name: k.name,
      plan: plan ? { id: plan.id, name: plan.name } : null,
      rateLimitPerSecond: k.rateLimitPerSecond,
      scopes: k.scopes,
      networks: k.networks,
      active: apiKeys.isActive(k, now),
      createdAt: k.createdAt.toISOString(),
      updatedAt: k.updatedAt.toISOString(),
      expiresAt: iso(k.expiresAt),
      revokedAt: iso(k.revokedAt),
      lastUsedAt: iso(k.lastUsedAt),
      replacedBy: k.replacedBy,
    };
  });
}

export const presentKey = async (db: Queryable, key: ApiKey) => (await presentKeys(db, [key]))[0]!;
