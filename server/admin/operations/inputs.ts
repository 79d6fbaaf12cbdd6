/**
 * The input fields the admin operations share (a key or plan named by id or name, scopes, networks,
 * dates, rates, quotas, a key's settings and a plan's fields) and their limits, each rejecting bad
 * input with a message saying what it accepts.
 */
import { z } from 'zod';
import { PREFIX_LENGTH } from '../../../shared/apiKeys.js';
import { API_KEY_SCOPES } from '../../../shared/db/tables/apiKeys.js';
import { findNetwork } from '../../../shared/networks.js';
import { integer } from '../../endpoints/inputs.js';

const MAX_RATE = 1_000_000;
/** Rotation grace periods up to 30 days. */
export const MAX_GRACE_HOURS = 720;
export const DEFAULT_GRACE_HOURS = 24;
/** Usage queries read at most this many days (retention keeps at least 90). */
export const MAX_USAGE_DAYS = 366;
/** Hourly usage reads at most this many days (a chart of 744 points per key). */
export const MAX_HOURLY_USAGE_DAYS = 31;

export const keyRefInput = z
  .string({ error: 'must be a key id or its 12-character prefix (see keys list)' })
  .trim()
  .min(1, 'must be a key id or its 12-character prefix (see keys list)')
  .max(200, 'must be a key id or its 12-character prefix (see keys list)')
  .describe(`The key: its id, or its ${PREFIX_LENGTH}-character prefix as listed.`);

export const planRefInput = z
  .string({ error: 'must be a plan id or name' })
  .trim()
  .min(1, 'must be a plan id or name')
  .max(64, 'must be a plan id or name')
  .describe('The plan: its id or its name.');

export const keyNameInput = z
  .string({ error: 'must be a name (1 to 100 characters)' })
  .trim()
  .min(1, 'must be a name (1 to 100 characters)')
  .max(100, 'must be a name (1 to 100 characters)')
  .describe("The key's name (whom it was issued to).");

const PLAN_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
export const planNameInput = z
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

export const dateInput = z
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

/** A key's settings, as createKey, importKey and updateKey take them. */
export const keySettings = {
  plan: planRefInput.nullable().optional(),
  scopes: scopesInput.optional(),
  networks: networksInput.optional(),
  expiresAt: expiresAtInput.optional(),
  rateLimitPerSecond: keyRateInput.optional(),
};

/** A plan's fields, as createPlan and updatePlan take them. */
export const planFields = {
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
