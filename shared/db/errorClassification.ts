/**
 * What a database error means to its caller: a transaction that lost a conflict (run it again), a
 * prepared plan gone stale, a server that did not answer in time, or a database unreachable right
 * now (an outage: answer "try again") rather than a wrong query. Both implementations and their
 * callers classify errors here.
 */

/**
 * Whether a transaction failed only because PostgreSQL picked it to resolve a conflict with another
 * one (a deadlock victim, a serialization failure): running it again is the documented remedy.
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * A prepared statement whose plan no longer fits its tables (a migration changed a column it
 * returns while the process ran): the connection keeps failing it, so it is dropped.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan');
}

/**
 * How long after its statement_timeout the client still waits for PostgreSQL's answer: cancelling a
 * statement and saying so takes the server milliseconds, so a server silent past this is not
 * answering at all rather than busy.
 */
export const ANSWER_GRACE_MS = 1_000;

/**
 * A statement PostgreSQL did not answer within its statement_timeout and the grace after it: the
 * server is not answering (paused, hung, a host gone without closing its connections). An outage,
 * like a refused connection; its connection is closed at once, whatever it was doing.
 */
export class DatabaseNotAnsweringError extends Error {
  constructor(waitedMs: number, cause: unknown) {
    super(`PostgreSQL did not answer within ${waitedMs} ms (its statement timeout and ${ANSWER_GRACE_MS} ms more)`, { cause });
    this.name = 'DatabaseNotAnsweringError';
  }
}

/**
 * The deadline of the work under way (a web request's one budget for all its database work,
 * shared/db/deadline.ts) passed before the database answered: for that work the database is not
 * answering, as past a statement's own limit, so it is classified the same way (the web answers
 * JSON 503 with Retry-After). A statement cut by it has its connection closed at once, like one
 * past its own limit.
 */
export class DatabaseDeadlineError extends Error {
  constructor(cause?: unknown) {
    super('PostgreSQL did not answer before the deadline of the work under way (the database budget of a request)', { cause });
    this.name = 'DatabaseDeadlineError';
  }
}

/** node-postgres's error for a query its client-side limit (query_timeout) ended. */
export const isQueryReadTimeout = (error: unknown): boolean => error instanceof Error && error.message === 'Query read timeout';

/** SQLSTATEs that mean the server cannot serve now: shutting down, starting up, full, or a replica after a failover. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006']);
/** Socket errors of a server that is down or unreachable. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What node-postgres says, without a code, when a connection dies or cannot be made in time. */
const UNAVAILABLE_MESSAGE =
  /connection terminated|connection timeout|timeout exceeded when trying to connect|connection error and is not queryable|Connection refused/i;

/**
 * Whether `error` says the database is unreachable right now (an outage, a restart, a failover)
 * rather than that the query was wrong: callers answer "try again" instead of failing. SQLSTATE
 * class 08 is "connection exception".
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof DatabaseNotAnsweringError || error instanceof DatabaseDeadlineError || isQueryReadTimeout(error)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
  if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
  return UNAVAILABLE_MESSAGE.test(error.message);
}
