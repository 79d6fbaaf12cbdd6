/**
 * The one database interface of opscan (Queryable, Session, Db) and how a process gets one:
 * createDb picks the implementation, PostgreSQL (postgresDb.ts) when a URL is given, else PGlite
 * (pgliteDb.ts). Callers import everything about the database from here: the bytea convention
 * (bytea.ts), prepared statements, the error classification (errorClassification.ts) and the
 * deadline of the work under way (deadline.ts) are re-exported.
 */
import type { BaseConfig } from '../config.js';
import type { Logger } from '../log.js';
import { isTransactionConflict } from './errorClassification.js';
import { createPgliteDb } from './pgliteDb.js';
import { createPostgresDb } from './postgresDb.js';

export { bytea } from './bytea.js';
export {
  ANSWER_GRACE_MS,
  DatabaseDeadlineError,
  DatabaseNotAnsweringError,
  isDatabaseUnavailable,
  isTransactionConflict,
} from './errorClassification.js';
export { withDeadline, withinDeadline } from './deadline.js';
export { createPostgresDb, prepared, replicationLagSeconds } from './postgresDb.js';

/**
 * The one database interface of opscan. It is implemented by a `pg` pool (real PostgreSQL, when
 * DATABASE_URL is set) and by PGlite (Postgres compiled to WASM, embedded in-process), so the same
 * SQL runs everywhere. Both return int8 and numeric columns as strings: large integers stay exact.
 */
export interface Queryable {
  query<TRow = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<{ rows: TRow[]; rowCount: number }>;
  /**
   * `copy … from stdin` with rows already in COPY's text format, in chunks of whole lines (PostgreSQL's bulk
   * load path, through pg-copy-streams). Only on a PostgreSQL connection: PGlite's COPY reads
   * files, so there callers write the same rows with multi-row inserts (shared/db/copy.ts).
   */
  copyFrom?(statement: string, chunks: Iterable<Buffer>): Promise<void>;
}

/** One connection kept for session-scoped state (an advisory lock). */
export interface Session extends Queryable {
  /**
   * Resolves with the error once the connection is lost (the server restarted, crashed, or ended
   * it): whatever the session held (its locks) is gone with it. Never resolves on PGlite.
   */
  readonly lost: Promise<Error>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one dedicated session (for session-scoped state such as advisory locks). The
   * session goes back to the pool when `fn` settles.
   */
  withSession<T>(fn: (session: Session) => Promise<T>): Promise<T>;
  /**
   * Subscribes to NOTIFY on `channel`; resolves to an unsubscribe function. The subscription
   * outlives its connection: a lost one is made again (with back-off) and listens again. What was
   * notified meanwhile is lost, so `onNotify` is then called once with an empty payload: a
   * subscriber re-reads what it waits for.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export function withTransaction<T>(db: Db, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}

export type DbOptions = {
  /** PostgreSQL URL; when absent the store is PGlite in `dataDir` (or in memory without one). */
  databaseUrl?: string;
  dataDir?: string;
  /** Pool size for PostgreSQL. */
  max?: number;
  /**
   * Per-statement limit for PostgreSQL sessions, enforced by the server (statement_timeout: a slower
   * statement fails with 57014) and, a grace later, by the client: a server that has not answered
   * even its own cancellation by then is not answering (paused, hung, a host gone without a word),
   * and the statement fails as an outage (DatabaseNotAnsweringError). Unset: no limit (migrations).
   */
  statementTimeoutMs?: number;
  /** How long to wait for a new PostgreSQL connection before failing (default 10 s, never forever). */
  connectTimeoutMs?: number;
  /** Labels the availability metrics (`primary` unless told; a replica is named by its host). */
  name?: string;
  /** Where outages are logged (the start and the end of each, once). */
  log?: Logger;
};

/** Runs `fn` in a transaction, again (up to `attempts` times in all) when it lost a conflict. */
export async function transactionRetryingConflicts<T>(db: Db, fn: (tx: Queryable) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(fn);
    } catch (error) {
      if (attempt >= attempts || !isTransactionConflict(error)) throw error;
    }
  }
}

/**
 * The store a worker process's configuration names (DATABASE_URL, else PGlite in DATA_DIR), its
 * statements limited by DB_STATEMENT_TIMEOUT_MS (0: no limit).
 */
export function configuredStore(config: Pick<BaseConfig, 'DATABASE_URL' | 'DATA_DIR' | 'DB_STATEMENT_TIMEOUT_MS'>): DbOptions {
  return { databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS || undefined };
}

export async function createDb(options: DbOptions): Promise<Db> {
  return options.databaseUrl ? createPostgresDb(options.databaseUrl, options) : createPgliteDb(options.dataDir);
}
