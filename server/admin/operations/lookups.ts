/**
 * What the admin operations look up or check before they change anything: a key or plan named by
 * id, prefix or name (an unknown one is a 404 naming the field), that an update changes something,
 * a unique violation, and a key's settings as stored (its plan named by id).
 */
import type { z } from 'zod';
import { PREFIX_LENGTH } from '../../../shared/apiKeys.js';
import type { Queryable } from '../../../shared/db/client.js';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import type { ApiKey } from '../../../shared/db/tables/apiKeys.js';
import * as apiPlans from '../../../shared/db/tables/apiPlans.js';
import type { ApiPlan } from '../../../shared/db/tables/apiPlans.js';
import { AppError } from '../../../shared/errors.js';
import type { keySettings } from './inputs.js';

export async function findKey(db: Queryable, ref: string, param = 'key'): Promise<ApiKey> {
  const found =
    ref.length === PREFIX_LENGTH ? await apiKeys.findByPrefix(db, ref) : /^\d{1,18}$/.test(ref) ? await apiKeys.findById(db, ref) : null;
  if (!found) throw new AppError('NOT_FOUND', `No API key "${ref}" (give its id or its ${PREFIX_LENGTH}-character prefix)`, { param });
  return found;
}

export async function findPlan(db: Queryable, ref: string, param = 'plan'): Promise<ApiPlan> {
  const found = /^\d{1,18}$/.test(ref) ? await apiPlans.findById(db, ref) : await apiPlans.findByName(db, ref);
  if (!found) throw new AppError('NOT_FOUND', `No plan "${ref}" (see the plans list)`, { param });
  return found;
}

export function requireChanges(input: Record<string, unknown>, except: string[]): void {
  if (Object.entries(input).every(([k, v]) => except.includes(k) || v === undefined)) {
    throw new AppError('BAD_REQUEST', 'Invalid input: nothing to change (give at least one field)');
  }
}

export const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

type KeySettings = z.output<z.ZodObject<typeof keySettings>>;

/** The settings as stored: the plan named by id or name becomes its id (null: no plan; absent: unchanged). */
export async function storedSettings(db: Queryable, s: KeySettings) {
  return {
    planId: s.plan ? (await findPlan(db, s.plan)).id : s.plan,
    scopes: s.scopes,
    networks: s.networks,
    expiresAt: s.expiresAt,
    rateLimitPerSecond: s.rateLimitPerSecond,
  };
}
