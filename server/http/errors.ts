import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError, type AppErrorCode } from '../../shared/errors.js';

/** The one mapping from error codes to HTTP statuses, for both transports. */
export const HTTP_STATUS: Readonly<Record<AppErrorCode, number>> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
};

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

/** Validates raw input with an endpoint's schema; a failure is a 400 naming the parameter. */
export function parseInput<TSchema extends z.ZodType>(schema: TSchema, raw: unknown): z.output<TSchema> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw fromZodError(parsed.error, raw);
  return parsed.data;
}

/** Anything thrown → an AppError; unknown failures become a generic 500 (the cause is logged). */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof z.ZodError) return fromZodError(error);
  if (error instanceof TRPCError) {
    if (error.cause instanceof AppError) return error.cause;
    if (error.cause instanceof z.ZodError) return fromZodError(error.cause);
    const code = (error.code in HTTP_STATUS ? error.code : 'BAD_REQUEST') as AppErrorCode;
    if (code !== 'INTERNAL_SERVER_ERROR') return new AppError(code, error.message, { cause: error });
  }
  // PostgreSQL cancelled the statement at the web pool's statement_timeout: busy, not broken.
  if ((error as { code?: unknown } | null)?.code === '57014') {
    return new AppError('SERVICE_UNAVAILABLE', 'The query took too long; try again or ask for a smaller page.', { cause: error });
  }
  return new AppError('INTERNAL_SERVER_ERROR', 'Internal error', { cause: error });
}

/** The JSON body of every error: a human `message` and a stable `code` (plus the parameter). */
export function errorBody(error: AppError): Record<string, unknown> {
  return {
    message: error.message,
    code: error.code,
    ...(error.param ? { param: error.param } : {}),
    ...(error.meta ?? {}),
  };
}
