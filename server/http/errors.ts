import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError, type AppErrorCode } from '../../shared/errors.js';
import { fromZodError } from '../endpoints/inputs.js';

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
