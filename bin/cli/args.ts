import { parseArgs } from 'node:util';

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
