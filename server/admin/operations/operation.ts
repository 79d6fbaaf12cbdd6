/**
 * What an admin operation is: an operator's action on API keys, plans or usage, defined once as its
 * input schema (zod, validated the same way for every caller), its answer's schema, and `run`. The
 * admin HTTP API (/admin/v1, server/admin/routes.ts), its OpenAPI document (server/admin/openapi.ts)
 * and the `opscan keys|plans|usage` commands (bin/cli/) all call them through `perform`, so they
 * cannot drift apart.
 */
import type { z } from 'zod';
import type { Db } from '../../../shared/db/client.js';
import { parseInput } from '../../endpoints/inputs.js';

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

export const defineOperation = <TInput extends z.ZodObject, TOutput extends z.ZodType>(
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
