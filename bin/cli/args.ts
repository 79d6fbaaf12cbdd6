import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake on the command line: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/** A refusal that names what to do (lock held, unknown id…): printed alone, exit code 1. */
export class CommandError extends Error {}

/** parseArgs (Node's own) with the failure turned into a UsageError naming the command. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
