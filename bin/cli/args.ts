import { parseArgs } from 'node:util';
import type { z } from 'zod';
import type { Db } from '../../shared/db/client.js';
import { AppError } from '../../shared/errors.js';
import { perform, type AdminOperation } from '../../server/admin/operations/index.js';

/** A mistake on the command line: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/** A refusal that names what to do (lock held, unknown id…): printed alone, exit code 1. */
export class CommandError extends Error {}

type Options = Record<string, { type: 'string' | 'boolean' }>;
/** What parseArgs answers for `T` (spelled out: the build emits declarations, which cannot name node:util's own). */
export type Parsed<T extends Options> = {
  values: { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };
  positionals: string[];
};

/** parseArgs (Node's own) with the failure turned into a UsageError naming the problem. */
export function parse<T extends Options>(args: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The command-line flag of each operation field (server/admin/operations/), to name it in errors. */
const FLAG_OF: Record<string, string> = {
  rateLimitPerSecond: '--rate-limit',
  expiresAt: '--expires',
  requestsPerDay: '--per-day',
  requestsPerMonth: '--per-month',
  webhooksAllowed: '--webhooks',
  graceHours: '--grace-hours',
  groupBy: '--by',
};
const flagOf = (field: string) => FLAG_OF[field] ?? `--${field}`;

/**
 * Runs an admin operation for a command: a refused input is a UsageError naming the flag, a
 * refusal of the operation (unknown key or plan, conflict) a CommandError.
 */
export async function performCommand<TInput extends z.ZodObject, TOutput extends z.ZodType>(
  db: Db,
  op: AdminOperation<TInput, TOutput>,
  raw: Record<string, unknown>,
  positional: Record<string, string> = {},
): Promise<z.input<TOutput>> {
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
  try {
    return await perform(db, op, given);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const field = err.param?.split('.')[0];
    const named = field ? (positional[field] ?? flagOf(field)) : undefined;
    const message = named ? err.message.replace(`parameter "${err.param}"`, named).replace(`"${field}"`, named) : err.message;
    if (err.code === 'BAD_REQUEST') throw new UsageError(message);
    throw new CommandError(message);
  }
}

/** A comma list (`a,b`), or null for `word` (e.g. `all`, `none`). */
export function listOrNull(raw: string | undefined, word: string): string[] | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === word) return null;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The value, or null for `word` (e.g. `none`, `never`, `default`). */
export const valueOrNull = (raw: string | undefined, word: string): string | null | undefined => (raw === word ? null : raw);
