/**
 * What an operator does with API keys, plans and usage, defined once: each operation is its input
 * schema (zod, validated the same way for every caller), its answer's schema, and `run`. The admin
 * HTTP API (/admin/v1, server/admin/routes.ts), its OpenAPI document (server/admin/openapi.ts) and
 * the `opscan keys|plans|usage` commands (bin/cli/) all call these, so they cannot drift apart.
 *
 * Every change to a key or a plan is announced on API_KEYS_CHANNEL (apiKeys.announceChange), so web
 * processes drop what they remember of the key within moments.
 */
import { z } from 'zod';
import { generateApiKey, importApiKey, IMPORTED_KEY_PATTERN, PREFIX_LENGTH } from '../../shared/apiKeys.js';
import { withTransaction, type Db, type Queryable } from '../../shared/db/client.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import { API_KEY_SCOPES, type ApiKey } from '../../shared/db/tables/apiKeys.js';
import * as apiKeyUsage from '../../shared/db/tables/apiKeyUsage.js';
import * as apiPlans from '../../shared/db/tables/apiPlans.js';
import type { ApiPlan } from '../../shared/db/tables/apiPlans.js';
import { AppError } from '../../shared/errors.js';
import { findNetwork } from '../../shared/networks.js';
import { integer, parseInput } from '../endpoints/inputs.js';

export type AdminOperation<TInput extends z.ZodObject = z.ZodObject, TOutput extends z.ZodType = z.ZodType> = {
  summary: string;
  description?: string;
  tag: 'keys' | 'plans' | 'usage';
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Under /admin/v1; `{name}` segments are input fields taken from the path. */
  path: string;
  /** 201 for operations that create something. */
  status?: 200 | 201;
  input: TInput;
  output: TOutput;
  run(db: Db, input: z.output<TInput>): Promise<z.input<TOutput>>;
};

const defineOperation = <TInput extends z.ZodObject, TOutput extends z.ZodType>(
  op: AdminOperation<TInput, TOutput>,
): AdminOperation<TInput, TOutput> => op;

/** Validates `raw` with the operation's schema (a 400 naming the field otherwise), then runs it. */
export function perform<TInput extends z.ZodObject, TOutput extends z.ZodType>(
  db: Db,
  op: AdminOperation<TInput, TOutput>,
  raw: unknown,
): Promise<z.input<TOutput>> {
  return op.run(db, parseInput(op.input, raw));
}

// ---------------------------------------------------------------------------------------------
// Inputs

const MAX_RATE = 1_000_000;
/** Rotation grace periods up to 30 days. */
export const MAX_GRACE_HOURS = 720;
export const DEFAULT_GRACE_HOURS = 24;
/** Usage queries read at most this many days (retention keeps at least 90). */
export const MAX_USAGE_DAYS = 366;
/** Hourly usage reads at most this many days (a chart of 744 points per key). */
export const MAX_HOURLY_USAGE_DAYS = 31;

const keyRefInput = z
  .string({ error: 'must be a key id or its 12-character prefix (see keys list)' })
  .trim()
  .min(1, 'must be a key id or its 12-character prefix (see keys list)')
  .max(200, 'must be a key id or its 12-character prefix (see keys list)')
  .describe(`The key: its id, or its ${PREFIX_LENGTH}-character prefix as listed.`);

const planRefInput = z
  .string({ error: 'must be a plan id or name' })
  .trim()
  .min(1, 'must be a plan id or name')
  .max(64, 'must be a plan id or name')
  .describe('The plan: its id or its name.');

const keyNameInput = z
  .string({ error: 'must be a name (1 to 100 characters)' })
  .trim()
  .min(1, 'must be a name (1 to 100 characters)')
  .max(100, 'must be a name (1 to 100 characters)')
  .describe("The key's name (whom it was issued to).");

const PLAN_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const planNameInput = z
  .string({ error: 'must be a plan name' })
  .regex(PLAN_NAME, 'must start with a letter, then up to 63 letters, digits, _ . or -')
  .describe('Plan name: a letter, then up to 63 letters, digits, `_`, `.` or `-`.');

const scopesInput = z
  .array(z.enum(API_KEY_SCOPES, { error: `each scope must be one of ${API_KEY_SCOPES.join(', ')}` }), {
    error: `must be a list of scopes (${API_KEY_SCOPES.join(', ')})`,
  })
  .min(1, 'must name at least one scope')
  .max(API_KEY_SCOPES.length * 2)
  .transform((scopes) => API_KEY_SCOPES.filter((s) => scopes.includes(s)))
  .describe(
    `What the key may do: ${API_KEY_SCOPES.join(', ')} (read: the data API; webhooks: manage its webhooks; admin: operator endpoints; rpc: the ERC-4337 RPC at /rpc/<network>).`,
  );

const networkNameInput = z
  .string({ error: 'each network must be a network name (see getNetworks)' })
  .trim()
  .max(64, 'each network must be a network name (see getNetworks)')
  .transform((name, ctx) => {
    const found = findNetwork(name);
    if (!found) ctx.addIssue({ code: 'custom', message: `unknown network "${name}"` });
    return found?.name ?? name;
  });

const networksInput = z
  .array(networkNameInput, { error: 'must be a list of network names, or null for all' })
  .min(1, 'must name at least one network (null: all)')
  .max(64)
  .transform((names) => [...new Set(names)])
  .nullable()
  .describe('Network names allowed (null: every network the deployment serves).');

const dateInput = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], {
    error: 'must be an ISO 8601 date or date-time (e.g. 2027-01-31 or 2027-01-31T12:00:00Z)',
  })
  .transform((s) => new Date(s));

const expiresAtInput = dateInput.nullable().describe('When the key stops working (ISO 8601; null: never).');

const keyRateInput = integer(1, MAX_RATE, `an integer from 1 to ${MAX_RATE}`)
  .nullable()
  .describe("Requests per second of a key without a plan (null: the deployment's RATE_LIMIT_PER_SECOND). A plan's rate wins.");

const quotaInput = (what: string) =>
  integer(1, Number.MAX_SAFE_INTEGER, 'a positive integer, or null for no cap').nullable().describe(`${what} (null: no cap).`);

// ---------------------------------------------------------------------------------------------
// Answers

const dateOutput = z.iso.datetime();

const planOutput = z
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

const keyOutput = z
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

const issuedKeyOutput = z
  .object({
    apiKey: keyOutput,
    key: z.string().describe('The key itself: shown only in this answer (only its hash is stored).'),
  })
  .meta({ id: 'IssuedApiKey' });

type PlanOut = z.input<typeof planOutput>;
type KeyOut = z.input<typeof keyOutput>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function presentPlan(p: ApiPlan): PlanOut {
  return { ...p, createdAt: p.createdAt.toISOString(), updatedAt: p.updatedAt.toISOString() };
}

async function presentKeys(db: Queryable, keys: ApiKey[]): Promise<KeyOut[]> {
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

const presentKey = async (db: Queryable, key: ApiKey) => (await presentKeys(db, [key]))[0]!;

// ---------------------------------------------------------------------------------------------
// Lookups: an unknown key or plan is a 404 naming the field.

async function findKey(db: Queryable, ref: string, param = 'key'): Promise<ApiKey> {
  const found =
    ref.length === PREFIX_LENGTH ? await apiKeys.findByPrefix(db, ref) : /^\d{1,18}$/.test(ref) ? await apiKeys.findById(db, ref) : null;
  if (!found) throw new AppError('NOT_FOUND', `No API key "${ref}" (give its id or its ${PREFIX_LENGTH}-character prefix)`, { param });
  return found;
}

async function findPlan(db: Queryable, ref: string, param = 'plan'): Promise<ApiPlan> {
  const found = /^\d{1,18}$/.test(ref) ? await apiPlans.findById(db, ref) : await apiPlans.findByName(db, ref);
  if (!found) throw new AppError('NOT_FOUND', `No plan "${ref}" (see the plans list)`, { param });
  return found;
}

function requireChanges(input: Record<string, unknown>, except: string[]): void {
  if (Object.entries(input).every(([k, v]) => except.includes(k) || v === undefined)) {
    throw new AppError('BAD_REQUEST', 'Invalid input: nothing to change (give at least one field)');
  }
}

const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

// ---------------------------------------------------------------------------------------------
// Keys

const keySettings = {
  plan: planRefInput.nullable().optional(),
  scopes: scopesInput.optional(),
  networks: networksInput.optional(),
  expiresAt: expiresAtInput.optional(),
  rateLimitPerSecond: keyRateInput.optional(),
};

type KeySettings = z.output<z.ZodObject<typeof keySettings>>;

/** The settings as stored: the plan named by id or name becomes its id (null: no plan; absent: unchanged). */
async function storedSettings(db: Queryable, s: KeySettings) {
  return {
    planId: s.plan ? (await findPlan(db, s.plan)).id : s.plan,
    scopes: s.scopes,
    networks: s.networks,
    expiresAt: s.expiresAt,
    rateLimitPerSecond: s.rateLimitPerSecond,
  };
}

export const createKey = defineOperation({
  summary: 'Issue a new API key (the key is in this answer only)',
  tag: 'keys',
  method: 'POST',
  path: '/keys',
  status: 201,
  input: z.object({ name: keyNameInput, ...keySettings }),
  output: issuedKeyOutput,
  async run(db, { name, ...settings }) {
    const { key, prefix, hash } = generateApiKey();
    const stored = await apiKeys.insert(db, { prefix, hash, name, ...(await storedSettings(db, settings)) });
    return { apiKey: await presentKey(db, stored), key };
  },
});

export const importKey = defineOperation({
  summary: 'Store a key issued by a previous deployment (e.g. JiffyScan) so that clients sending it keep working',
  tag: 'keys',
  method: 'POST',
  path: '/keys/import',
  status: 201,
  input: z.object({
    name: keyNameInput,
    key: z
      .string({ error: 'must be the key to import' })
      .regex(IMPORTED_KEY_PATTERN, 'must be 16 to 128 printable ASCII characters without spaces')
      .describe('The key as clients send it (16 to 128 printable ASCII characters).'),
    ...keySettings,
  }),
  output: keyOutput,
  async run(db, { name, key, ...settings }) {
    const parsed = importApiKey(key);
    const clash = await apiKeys.findClash(db, parsed);
    if (clash) {
      throw new AppError(
        'CONFLICT',
        `This key is already stored, or another key starts with ${parsed.prefix} ("${clash.name}"): nothing imported`,
        {
          param: 'key',
        },
      );
    }
    const stored = await apiKeys.insert(db, { ...parsed, name, ...(await storedSettings(db, settings)) });
    return presentKey(db, stored);
  },
});

export const listKeys = defineOperation({
  summary: 'List every key (prefixes only: keys are stored hashed)',
  tag: 'keys',
  method: 'GET',
  path: '/keys',
  input: z.object({}),
  output: z.object({ keys: z.array(keyOutput) }),
  async run(db) {
    return { keys: await presentKeys(db, await apiKeys.list(db)) };
  },
});

export const getKey = defineOperation({
  summary: 'One key',
  tag: 'keys',
  method: 'GET',
  path: '/keys/{key}',
  input: z.object({ key: keyRefInput }),
  output: keyOutput,
  async run(db, { key }) {
    return presentKey(db, await findKey(db, key));
  },
});

export const updateKey = defineOperation({
  summary: "Change a key's name, plan, scopes, networks, expiry or own rate (absent fields are kept; null clears)",
  tag: 'keys',
  method: 'PATCH',
  path: '/keys/{key}',
  input: z.object({ key: keyRefInput, name: keyNameInput.optional(), ...keySettings }),
  output: keyOutput,
  async run(db, input) {
    requireChanges(input, ['key']);
    const { key: ref, name, ...settings } = input;
    const key = await findKey(db, ref);
    const updated = (await apiKeys.update(db, key.id, { name, ...(await storedSettings(db, settings)) }))!;
    await apiKeys.announceChange(db, key.id);
    return presentKey(db, updated);
  },
});

export const rotateKey = defineOperation({
  summary: 'Issue a replacement key; the old one keeps working for a grace period',
  description:
    "The new key has the old one's name, plan, scopes, networks and rate. The old key expires after `graceHours` " +
    '(sooner if it was due to expire sooner) and names the new one in `replacedBy`.',
  tag: 'keys',
  method: 'POST',
  path: '/keys/{key}/rotate',
  status: 201,
  input: z.object({
    key: keyRefInput,
    graceHours: integer(0, MAX_GRACE_HOURS, `an integer from 0 to ${MAX_GRACE_HOURS}`)
      .default(DEFAULT_GRACE_HOURS)
      .describe(`Hours the old key keeps working (0–${MAX_GRACE_HOURS}, default ${DEFAULT_GRACE_HOURS}).`),
  }),
  output: issuedKeyOutput.extend({ replaced: keyOutput }),
  async run(db, { key: ref, graceHours }) {
    const old = await findKey(db, ref);
    if (!apiKeys.isActive(old))
      throw new AppError('CONFLICT', `Key ${old.prefix} is revoked or expired: issue a new one instead`, { param: 'key' });
    const { key, prefix, hash } = generateApiKey();
    const graceEnd = new Date(Date.now() + graceHours * 3_600_000);
    const [issued, replaced] = await withTransaction(db, async (tx) => {
      const issued = await apiKeys.insert(tx, {
        prefix,
        hash,
        name: old.name,
        rateLimitPerSecond: old.rateLimitPerSecond,
        planId: old.planId,
        scopes: old.scopes,
        networks: old.networks,
        // The same customer: the new key counts against the quotas the old one has been using.
        quotaHolderId: old.quotaHolderId,
      });
      const expiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
      const replaced = (await apiKeys.update(tx, old.id, { expiresAt, replacedBy: issued.id }))!;
      await apiKeys.announceChange(tx, old.id);
      return [issued, replaced];
    });
    return { apiKey: await presentKey(db, issued), key, replaced: await presentKey(db, replaced) };
  },
});

export const revokeKey = defineOperation({
  summary: 'Revoke a key at once (on every web process within seconds)',
  tag: 'keys',
  method: 'POST',
  path: '/keys/{key}/revoke',
  input: z.object({ key: keyRefInput }),
  output: keyOutput,
  async run(db, { key: ref }) {
    const key = await findKey(db, ref);
    const revoked = (await apiKeys.revokeById(db, key.id))!;
    await apiKeys.announceChange(db, key.id);
    return presentKey(db, revoked);
  },
});

// ---------------------------------------------------------------------------------------------
// Plans

const planFields = {
  rateLimitPerSecond: integer(1, MAX_RATE, `an integer from 1 to ${MAX_RATE}`).describe('Requests per second (token bucket refill).'),
  burst: integer(1, MAX_RATE * 10, 'a positive integer').describe(
    'Most requests at once (token bucket size). Default: 3 × rateLimitPerSecond.',
  ),
  requestsPerDay: quotaInput('Requests per UTC day'),
  requestsPerMonth: quotaInput('Requests per UTC calendar month'),
  webhooksAllowed: integer(0, 1_000_000, 'an integer from 0, or null for no cap')
    .nullable()
    .describe('Webhooks a key may own (0: none; null: no cap).'),
  networks: networksInput,
};

const planWithKeysOutput = planOutput.extend({ keys: z.number().int().describe('Keys on the plan (revoked ones included).') });

export const createPlan = defineOperation({
  summary: 'Create a plan',
  tag: 'plans',
  method: 'POST',
  path: '/plans',
  status: 201,
  input: z.object({
    name: planNameInput,
    rateLimitPerSecond: planFields.rateLimitPerSecond,
    burst: planFields.burst.optional(),
    requestsPerDay: planFields.requestsPerDay.default(null),
    requestsPerMonth: planFields.requestsPerMonth.default(null),
    webhooksAllowed: planFields.webhooksAllowed.default(null),
    networks: planFields.networks.default(null),
  }),
  output: planOutput,
  async run(db, { burst, ...plan }) {
    if (await apiPlans.findByName(db, plan.name))
      throw new AppError('CONFLICT', `A plan named "${plan.name}" exists already`, { param: 'name' });
    try {
      const created = await apiPlans.insert(db, { ...plan, burst: burst ?? plan.rateLimitPerSecond * 3 });
      await apiKeys.announceChange(db, null);
      return presentPlan(created);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('CONFLICT', `A plan named "${plan.name}" exists already`, { param: 'name' });
      throw e;
    }
  },
});

export const listPlans = defineOperation({
  summary: 'List the plans, with how many keys each has',
  tag: 'plans',
  method: 'GET',
  path: '/plans',
  input: z.object({}),
  output: z.object({ plans: z.array(planWithKeysOutput) }),
  async run(db) {
    const plans = await apiPlans.list(db);
    const counts = await apiKeys.countsByPlan(db);
    return { plans: plans.map((p) => ({ ...presentPlan(p), keys: counts.get(p.id) ?? 0 })) };
  },
});

export const updatePlan = defineOperation({
  summary: "Change a plan's name, rates, quotas or networks (absent fields are kept; null clears a cap); its keys follow at once",
  tag: 'plans',
  method: 'PATCH',
  path: '/plans/{plan}',
  input: z.object({
    plan: planRefInput,
    name: planNameInput.optional(),
    ...Object.fromEntries(Object.entries(planFields).map(([k, v]) => [k, v.optional()])),
  }) as z.ZodObject<
    { plan: typeof planRefInput; name: z.ZodOptional<typeof planNameInput> } & {
      [K in keyof typeof planFields]: z.ZodOptional<(typeof planFields)[K]>;
    }
  >,
  output: planOutput,
  async run(db, input) {
    requireChanges(input, ['plan']);
    const { plan: ref, ...changes } = input;
    const plan = await findPlan(db, ref);
    if (changes.name && changes.name !== plan.name && (await apiPlans.findByName(db, changes.name))) {
      throw new AppError('CONFLICT', `A plan named "${changes.name}" exists already`, { param: 'name' });
    }
    const updated = (await apiPlans.update(db, plan.id, changes))!;
    await apiKeys.announceChange(db, null);
    return presentPlan(updated);
  },
});

export const deletePlan = defineOperation({
  summary: 'Delete a plan no usable key is on (409 otherwise: move those keys to another plan first)',
  description: 'Revoked and expired keys do not count: they are taken off the plan, which they no longer use.',
  tag: 'plans',
  method: 'DELETE',
  path: '/plans/{plan}',
  input: z.object({ plan: planRefInput }),
  output: z.object({ deleted: planOutput }),
  async run(db, { plan: ref }) {
    const plan = await findPlan(db, ref);
    await withTransaction(db, async (tx) => {
      const inUse = await apiKeys.countActiveOnPlan(tx, plan.id);
      if (inUse > 0) {
        throw new AppError('CONFLICT', `Plan "${plan.name}" is used by ${inUse} key(s): move them to another plan first`, {
          param: 'plan',
          meta: { keys: inUse },
        });
      }
      await apiKeys.detachInactiveFromPlan(tx, plan.id);
      await apiPlans.deleteById(tx, plan.id);
      await apiKeys.announceChange(tx, null);
    });
    return { deleted: presentPlan(plan) };
  },
});

// ---------------------------------------------------------------------------------------------
// Usage

export const USAGE_GROUPINGS = ['day', 'hour', 'endpoint', 'key'] as const;

const sumsOutput = {
  requests: z.number().int(),
  clientErrors: z.number().int().describe('Requests answered 4xx.'),
  serverErrors: z.number().int().describe('Requests answered 5xx.'),
};

const usageRowOutput = z
  .object({
    period: dateOutput.optional().describe('groupBy day or hour: the UTC day or hour the row counts.'),
    key: z.object({ id: z.string(), prefix: z.string(), name: z.string() }).optional().describe('groupBy day, hour or key.'),
    endpoint: z.string().optional().describe('groupBy endpoint.'),
    ...sumsOutput,
  })
  .meta({ id: 'UsageRow' });

export const getUsage = defineOperation({
  summary: 'Requests counted per key per day or hour, per endpoint, or per key (top keys)',
  description:
    'The range is [from, to) in UTC: by default the last `days` days (7) up to now. groupBy=day|hour: one row per key and ' +
    'period for the `limit` busiest keys of the range (or the one `key`); endpoint: per endpoint, busiest first; key: the ' +
    `busiest keys. Ranges up to ${MAX_USAGE_DAYS} days (${MAX_HOURLY_USAGE_DAYS} by hour). Counts reach the database in ` +
    "batches: the last few seconds' requests may not be in yet.",
  tag: 'usage',
  method: 'GET',
  path: '/usage',
  input: z.object({
    key: keyRefInput.optional().describe('Only this key (id or prefix).'),
    groupBy: z
      .enum(USAGE_GROUPINGS, { error: `must be one of ${USAGE_GROUPINGS.join(', ')}` })
      .default('day')
      .describe('day (default), hour, endpoint or key.'),
    from: dateInput.optional().describe('Start (ISO 8601 date or date-time, inclusive). Default: `days` days before `to`.'),
    to: dateInput.optional().describe('End (exclusive). Default: now.'),
    days: integer(1, MAX_USAGE_DAYS, `an integer from 1 to ${MAX_USAGE_DAYS}`)
      .default(7)
      .describe('Days before `to` when `from` is absent (default 7).'),
    limit: integer(1, 100, 'an integer from 1 to 100').default(10).describe('Most keys (or endpoints) answered (1–100, default 10).'),
  }),
  output: z.object({
    from: dateOutput,
    to: dateOutput,
    groupBy: z.enum(USAGE_GROUPINGS),
    rows: z.array(usageRowOutput),
  }),
  async run(db, input) {
    const to = input.to ?? new Date();
    const from = input.from ?? new Date(to.getTime() - input.days * 86_400_000);
    const days = (to.getTime() - from.getTime()) / 86_400_000;
    if (days <= 0) throw new AppError('BAD_REQUEST', 'Invalid parameter "from": must be before "to"', { param: 'from' });
    const maxDays = input.groupBy === 'hour' ? MAX_HOURLY_USAGE_DAYS : MAX_USAGE_DAYS;
    if (days > maxDays) {
      throw new AppError(
        'BAD_REQUEST',
        `Invalid parameter "from": the range may span at most ${maxDays} days${input.groupBy === 'hour' ? ' by hour' : ''}`,
        {
          param: 'from',
        },
      );
    }
    const range = { from, to, apiKeyId: input.key ? (await findKey(db, input.key)).id : undefined };
    const keyOf = (r: apiKeyUsage.KeyUsage) => ({ id: r.apiKeyId, prefix: r.prefix, name: r.name });
    const sums = (r: apiKeyUsage.UsageSums) => ({ requests: r.requests, clientErrors: r.clientErrors, serverErrors: r.serverErrors });
    let rows: Array<z.input<typeof usageRowOutput>>;
    if (input.groupBy === 'endpoint') {
      rows = (await apiKeyUsage.perEndpoint(db, range, input.limit)).map((r) => ({ endpoint: r.endpoint, ...sums(r) }));
    } else if (input.groupBy === 'key') {
      rows = (await apiKeyUsage.topKeys(db, range, input.limit)).map((r) => ({ key: keyOf(r), ...sums(r) }));
    } else {
      rows = (await apiKeyUsage.perKeyPerPeriod(db, range, input.groupBy, input.limit)).map((r) => ({
        period: r.period.toISOString(),
        key: keyOf(r),
        ...sums(r),
      }));
    }
    return { from: from.toISOString(), to: to.toISOString(), groupBy: input.groupBy, rows };
  },
});

/** Every operation, in the order the OpenAPI document lists them. */
export const adminOperations = {
  listKeys,
  createKey,
  importKey,
  getKey,
  updateKey,
  rotateKey,
  revokeKey,
  listPlans,
  createPlan,
  updatePlan,
  deletePlan,
  getUsage,
} as const;
