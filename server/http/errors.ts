import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError, type AppErrorCode } from '../../shared/errors.js';
import { isDatabaseUnavailable } from '../../shared/db/client.js';
import { fromZodError } from '../endpoints/inputs.js';

/** The one mapping from error codes to HTTP statuses, for both transports. */
export const HTTP_STATUS: Readonly<Record<AppErrorCode, number>> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
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
  // An outage, a restart or a failover: the caller's request was fine; the pool reconnects by itself.
  if (isDatabaseUnavailable(error)) {
    return new AppError('SERVICE_UNAVAILABLE', 'The database is unreachable right now; try again shortly.', { cause: error });
  }
  return new AppError('INTERNAL_SERVER_ERROR', 'Internal error', { cause: error });
}

/** Seconds a 503 asks the caller to wait (Retry-After): about what a restart or a failover takes. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Headers an error answer carries beside its body: Retry-After on a 503; on a 401 the challenge
 * HTTP requires, which also lets a browser following a link (the status page's) ask for the key as
 * a Basic password. (429s get theirs from rateLimitHeaders.)
 */
export function errorHeaders(error: AppError): Record<string, string> {
  if (error.code === 'SERVICE_UNAVAILABLE') return { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) };
  if (error.code === 'UNAUTHORIZED') return { 'www-authenticate': 'Basic realm="opscan API key (as the password)", charset="UTF-8"' };
  return {};
}

/**
 * The `data` of a tRPC error: the REST error body's message, code and parameter (its other context
 * too, untyped), and the HTTP status REST would answer. Typed so that tRPC clients see them.
 */
export type TrpcErrorData = { message: string; code: AppErrorCode; param?: string; httpStatus: number };

export function trpcErrorData(error: AppError): TrpcErrorData {
  return { ...errorBody(error), message: error.message, code: error.code, httpStatus: HTTP_STATUS[error.code] };
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
