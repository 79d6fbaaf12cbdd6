/**
 * One error type for everything a caller may branch on. Codes are a subset of tRPC's code names so
 * that one table maps them to HTTP for both transports (server/http/errorHandler.ts).
 */
export type AppErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'TOO_MANY_REQUESTS'
  | 'BAD_GATEWAY'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR';

export type AppErrorOptions = {
  cause?: unknown;
  /** The request parameter at fault (400s name it). */
  param?: string;
  /** Extra machine-readable context returned to the caller (never secrets). */
  meta?: Record<string, unknown>;
};

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly param?: string;
  readonly meta?: Record<string, unknown>;

  constructor(code: AppErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.param = options.param;
    this.meta = options.meta;
  }
}

/** A failure of something outside us (RPC node, database, HTTP peer) that is worth retrying. */
export class RetryableError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'RetryableError';
  }
}

/** The environment is wrong; the message lists every bad variable. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
