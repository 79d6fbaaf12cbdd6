import { z } from 'zod';
import type { NetworkConfig } from '../../shared/config.js';
import { AppError } from '../../shared/errors.js';
import { addressSchema, hashSchema } from '../../shared/models/primitives.js';
import { findNetwork } from '../../shared/networks.js';
import { assertNetworkAllowed } from '../access.js';
import type { Ctx } from '../context.js';

/**
 * The input parameters endpoints share, in one place. They accept query-string values (REST) and
 * JSON values (tRPC) alike, normalise what they accept (lower-case hex, canonical network names,
 * defaults) so that equal requests share a cache entry, and reject anything else with a message
 * saying what the parameter accepts.
 */

/**
 * An integer within [min, max]: a number (tRPC) or its decimal digits (REST). Anything else (NaN,
 * fractions, hex, repeated parameters) is rejected rather than coerced.
 */
export function integer(min: number, max: number, what: string): z.ZodType<number, number | string> {
  const message = `must be ${what}`;
  const digits = (v: unknown) => (typeof v === 'string' && /^\s*\d{1,16}\s*$/.test(v) ? Number(v) : v);
  return z.preprocess(digits, z.number({ error: message }).int(message).min(min, message).max(max, message)) as z.ZodType<
    number,
    number | string
  >;
}

export const MAX_FIRST = 100;
export const MAX_SKIP = 10_000;
export const MAX_DAYS = 366;

/** The integers 0 to N, as a union of literals (for small N: TypeScript unrolls it). */
type UpTo<N extends number, Seen extends number[] = []> = Seen['length'] extends N ? Seen[number] | N : UpTo<N, [...Seen, Seen['length']]>;

/** A page size (`first`): 1 to MAX_FIRST, as a number or its digits, so that typed clients see the bound. */
export type PageSize = Exclude<UpTo<typeof MAX_FIRST>, 0>;
export type PageSizeInput = PageSize | `${PageSize}`;
/** A number of days (`noOfDays`): 1 to MAX_DAYS, as a number or its digits. */
export type DayCount = Exclude<UpTo<typeof MAX_DAYS>, 0>;
export type DayCountInput = DayCount | `${DayCount}`;

export const firstInput = (integer(1, MAX_FIRST, `an integer from 1 to ${MAX_FIRST}`) as z.ZodType<number, PageSizeInput>)
  .default(10)
  .describe(`Page size: how many records to return (1–${MAX_FIRST}, default 10).`);

export const skipInput = integer(0, MAX_SKIP, `an integer from 0 to ${MAX_SKIP}`)
  .default(0)
  .describe(`How many records to skip (0–${MAX_SKIP}, default 0).`);

export const noOfDaysInput = (integer(1, MAX_DAYS, `an integer from 1 to ${MAX_DAYS}`) as z.ZodType<number, DayCountInput>)
  .default(7)
  .describe(`How many days of metrics (1–${MAX_DAYS}, default 7).`);

export const windowDaysInput = (integer(1, MAX_DAYS, `an integer from 1 to ${MAX_DAYS}`) as z.ZodType<number, DayCountInput>)
  .optional()
  .describe(`Totals over this many UTC days (1–${MAX_DAYS}) ending with the latest day that had activity; every day when absent.`);

export const blockNumberInput = integer(0, Number.MAX_SAFE_INTEGER, 'a block number (a non-negative integer)');
/** Log indexes are stored as 32-bit integers. */
export const logIndexInput = integer(0, 2 ** 31 - 1, 'a log index (a non-negative integer)').describe(
  'Block-level index of the log (as in the receipt).',
);

export const addressInput = addressSchema.describe('A 20-byte address, 0x-prefixed hex in any case.');
export const hashInput = hashSchema.describe('A 32-byte hash, 0x-prefixed hex in any case.');

/** Page parameters of every list endpoint. */
export const pageInput = { first: firstInput, skip: skipInput };

/**
 * A network name as clients spell it, folded to its canonical name (`baseSepolia` →
 * `base-sepolia`). Whether this server indexes it is checked by indexedNetwork(), which can list the
 * indexed ones.
 */
export const networkInput = z
  .string({ error: 'must be a network name (see getNetworks)' })
  .trim()
  .min(1, 'must be a network name (see getNetworks)')
  .max(64, 'must be a network name (see getNetworks)')
  .transform((name) => findNetwork(name)?.name ?? name)
  .describe('Network name, as in getNetworks (client spellings such as baseSepolia or Base are accepted).');

/** The served network `name` refers to; a 400 naming the served ones otherwise. */
export function indexedNetwork(ctx: Pick<Ctx, 'config'>, name: string): NetworkConfig {
  const found = ctx.config.networks.find((n) => n.name === name);
  if (found) return found;
  const served = ctx.config.networks.map((n) => n.name).join(', ');
  const known = findNetwork(name) !== undefined;
  const why = known ? `"${name}" is not indexed by this server` : `unknown network "${name}"`;
  throw new AppError('BAD_REQUEST', `Invalid parameter "network": ${why}; valid networks: ${served}`, {
    param: 'network',
    meta: { validNetworks: ctx.config.networks.map((n) => n.name) },
  });
}

/**
 * `network` of an endpoint that asks by address, block or nothing: absent, the deployment's default
 * network (servedNetwork()).
 */
export const defaultedNetworkInput = networkInput
  .optional()
  .describe(
    'Network name, as in getNetworks (client spellings such as baseSepolia or Base are accepted). Optional: absent, the ' +
      "deployment's default network (DEFAULT_NETWORK, else the only one it indexes; with several and no default, a 400 lists them).",
  );

/**
 * `network` of an endpoint that asks by a hash (user op, transaction): a hash names one thing on one
 * chain, so absent, every indexed network is searched (networkHolding()).
 */
export const searchedNetworkInput = networkInput
  .optional()
  .describe(
    'Network name, as in getNetworks (client spellings such as baseSepolia or Base are accepted). Optional: absent, ' +
      'whichever indexed network holds the hash is answered.',
  );

/** `network` of an endpoint that, without it, answers for every indexed network at once (indexedNetworks()). */
export const everyNetworkInput = networkInput
  .optional()
  .describe(
    'Network name, as in getNetworks (client spellings such as baseSepolia or Base are accepted). Optional: absent, every ' +
      'indexed network is answered.',
  );

/** The named network, else the deployment's default one; a 400 naming the choices when there is none. */
export function servedNetwork(ctx: Pick<Ctx, 'config'>, name: string | undefined): NetworkConfig {
  if (name !== undefined) return indexedNetwork(ctx, name);
  const fallback = ctx.config.defaultNetwork;
  if (fallback) {
    // A key restricted to other networks sees a config without the default (server/access.ts configFor).
    if (!ctx.config.networks.includes(fallback)) {
      assertNetworkAllowed(new Set(ctx.config.networks.map((n) => n.name)), fallback.name);
    }
    return fallback;
  }
  const served = ctx.config.networks.map((n) => n.name);
  throw new AppError(
    'BAD_REQUEST',
    `Invalid parameter "network": is required (this server indexes several networks and has no DEFAULT_NETWORK); valid networks: ${served.join(', ')}`,
    { param: 'network', meta: { validNetworks: served } },
  );
}

/**
 * The network to look a hash-keyed thing up on: the named one, else the only served one, else the
 * first served network on which `holds` finds it (null when none does). Whether the named or only
 * network holds it is the handler's own lookup (its not-found answer).
 */
export async function networkHolding(
  ctx: Pick<Ctx, 'config'>,
  name: string | undefined,
  holds: (network: NetworkConfig) => Promise<boolean>,
): Promise<NetworkConfig | null> {
  if (name !== undefined) return indexedNetwork(ctx, name);
  const networks = ctx.config.networks;
  if (networks.length === 1) return networks[0]!;
  const found = await Promise.all(networks.map(holds));
  return networks.find((_, i) => found[i]) ?? null;
}

/** The named network, or every served network when the parameter is absent. */
export function indexedNetworks(ctx: Pick<Ctx, 'config'>, name: string | undefined): NetworkConfig[] {
  return name === undefined ? [...ctx.config.networks] : [indexedNetwork(ctx, name)];
}

/**
 * Turns a validation failure into a 400 that names the parameter and what it accepts. `raw` is the
 * input as sent, to tell a missing parameter from a wrong one.
 */
export function fromZodError(error: z.ZodError, raw?: unknown): AppError {
  const issue = error.issues[0]!;
  const param = issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  const sent = raw && typeof raw === 'object' && issue.path.length > 0 ? (raw as Record<string, unknown>)[String(issue.path[0])] : raw;
  const what = issue.code === 'invalid_type' && sent === undefined ? 'is required' : issue.message;
  const message = param ? `Invalid parameter "${param}": ${what}` : `Invalid input: ${what}`;
  return new AppError('BAD_REQUEST', message, { param });
}

/** A NUL (PostgreSQL refuses it in text) or a UTF-16 surrogate without its pair (not encodable as UTF-8). */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The parameter (top-level key) of `raw` holding a string no text column can store, if any. */
function unstorableParam(raw: unknown, param?: string): string | null {
  if (typeof raw === 'string') return UNSTORABLE_TEXT.test(raw) ? (param ?? '') : null;
  if (raw && typeof raw === 'object') {
    for (const [key, value] of Object.entries(raw)) {
      const found = unstorableParam(value, param ?? key);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * Validates raw input with an endpoint's schema; a failure is a 400 naming the parameter. Strings
 * with a NUL or an unpaired surrogate are refused first, whatever the schema, so none reaches SQL.
 */
export function parseInput<TSchema extends z.ZodType>(schema: TSchema, raw: unknown): z.output<TSchema> {
  const unstorable = unstorableParam(raw);
  if (unstorable !== null) {
    const message = 'must not contain NUL characters or unpaired UTF-16 surrogates';
    throw new AppError('BAD_REQUEST', unstorable ? `Invalid parameter "${unstorable}": ${message}` : `Invalid input: ${message}`, {
      param: unstorable || undefined,
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw fromZodError(parsed.error, raw);
  return parsed.data;
}
