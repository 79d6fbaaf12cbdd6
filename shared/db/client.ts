import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import type { BaseConfig } from '../config.js';
import type { Logger } from '../log.js';
import { backoffMs, trackAvailability } from './availability.js';
import { createHostSelector, parseDatabaseUrl } from './hosts.js';

/**
 * Bytes (addresses, hashes, calldata, signatures, log topics and data) are stored as `bytea`, half
 * the size of their hex text, and are hex only at the edges. The one convention, for both drivers:
 *   - reads: a bytea column comes back as the lower-case `0x…` string the answers carry (the type
 *     parsers below, registered once for OID 17 and, for bytea[], 1001), so row mappers and JSON
 *     answers see what they saw when the columns were text;
 *   - writes and filters: a parameter bound to a bytea column is passed as `bytea(hex)` (`\x…`, the
 *     type's own text input, case-insensitive); the multi-row helpers do it for columns typed
 *     'bytea' (unnest.ts, copy.ts). A `0x…` string bound to bytea would be read as its ASCII
 *     characters (bytea's escape input): PGlite refuses one outright (the serializer below);
 *   - SQL that builds JSON or text from a bytea column writes `'0x' || encode(col, 'hex')`.
 * bytea compares byte-wise, so ordering by a hash is the order of its lower-case hex.
 */
export function bytea(hex: string): string;
export function bytea(hex: string | null | undefined): string | null;
export function bytea(hex: string | null | undefined): string | null {
  return hex === null || hex === undefined ? null : `\\x${hex.slice(2)}`;
}

/** `\x0102` (bytea's text output) → `0x0102`. */
const hexOfBytea = (value: string): string => `0x${value.slice(2)}`;

/** `{"\\x01","\\x02",NULL}` (bytea[]'s text output) → ['0x01', '0x02', null]. */
function hexesOfByteaArray(value: string): Array<string | null> {
  if (value === '{}') return [];
  return value
    .slice(1, -1)
    .split(',')
    .map((element) => (element === 'NULL' ? null : `0x${element.replace(/^"?\\+x/, '').replace(/"$/, '')}`));
}

pg.types.setTypeParser(pg.types.builtins.BYTEA, hexOfBytea);
pg.types.setTypeParser(1001 as typeof pg.types.builtins.BYTEA, hexesOfByteaArray);

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

/**
 * Whether a transaction failed only because PostgreSQL picked it to resolve a conflict with another
 * one (a deadlock victim, a serialization failure): running it again is the documented remedy.
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

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
 * Statements PostgreSQL parses once per connection: `prepared(text)` marks a statement text and
 * returns it, and a PostgreSQL pool runs it as a named prepared statement. PostgreSQL then plans it
 * generically once its estimate says that costs no more than planning for each call's values (its
 * default `plan_cache_mode`). For hot reads that planned in as long as they ran: getDailyMetrics'
 * statement (1.1 → 0.5 ms a call), GraphQL's first pages (server/graphql/rows.ts). Pointless with a
 * `limit $n`: a generic plan assumes a tenth of the table for it and is never chosen (and forcing
 * generic plans sorted a million ops there). Each text is kept on every connection for the
 * connection's life, so at most MAX_PREPARED texts are; later ones run unnamed. PGlite runs them as
 * any other statement.
 */
const preparedNames = new Map<string, string>();
const MAX_PREPARED = 200;

export function prepared(text: string): string {
  if (preparedNames.size < MAX_PREPARED && !preparedNames.has(text)) preparedNames.set(text, `opscan_${preparedNames.size + 1}`);
  return text;
}

/**
 * A prepared statement whose plan no longer fits its tables (a migration changed a column it
 * returns while the process ran): the connection keeps failing it, so it is dropped.
 */
function isStalePlan(error: unknown): boolean {
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

/** node-postgres's error for a query its client-side limit (query_timeout) ended. */
const isQueryReadTimeout = (error: unknown): boolean => error instanceof Error && error.message === 'Query read timeout';

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
  if (error instanceof DatabaseNotAnsweringError || isQueryReadTimeout(error)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
  if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
  return UNAVAILABLE_MESSAGE.test(error.message);
}

/**
 * How far a streaming replica's replay is behind, the standard way: 0 when it has replayed all the
 * WAL it received (an idle primary sends none, so an old last-replay time means nothing), else the
 * age of the last transaction it replayed. 0 on a primary; null when it cannot tell (a standby that
 * has neither received nor replayed anything yet).
 */
export async function replicationLagSeconds(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ lag_seconds: number | null }>(
    `select case
       when not pg_is_in_recovery() then 0
       when pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
       else extract(epoch from now() - pg_last_xact_replay_timestamp())
     end::float8 as lag_seconds`,
  );
  return rows[0]?.lag_seconds ?? null;
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

/**
 * A PostgreSQL pool as a Db (synchronous: the pool connects on first use). `url` may name several
 * hosts the libpq way (`postgres://h1,h2/db?target_session_attrs=read-write`): connections follow
 * the host that fits, across a failover (shared/db/hosts.ts).
 */
export function createPostgresDb(url: string, options: Omit<DbOptions, 'databaseUrl' | 'dataDir'> = {}): Db {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const hosts = parseDatabaseUrl(url);
  const name = options.name ?? 'primary';
  const selector = createHostSelector(hosts, { connectTimeoutMs, name, log: options.log });
  const queryTimeoutMs = options.statementTimeoutMs ? options.statementTimeoutMs + ANSWER_GRACE_MS : undefined;
  /**
   * What every connection of this Db is made with. TCP keepalive finds a connection whose host went
   * away without closing it (an idle pooled one, a LISTEN); it cannot find a paused server (its
   * kernel still answers), which is what the client-side query limit is for.
   */
  const clientConfig = {
    connectionString: hosts.urlFor(hosts.hosts[0]!),
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    query_timeout: queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  const pool = new pg.Pool({ ...clientConfig, Client: selector.Client, max: options.max ?? 10 });
  const availability = trackAvailability(name, options.log);
  // A client whose connection dies (the server restarted or ended it) emits 'error'; with no
  // listener that would end the process. The pool listens only while a client is idle (and then
  // replaces it), so every client gets a listener of its own for its whole life: a borrowed one
  // fails its next query instead, and the pool drops it when it is released.
  pool.on('error', (error, client) => {
    selector.failed(client, error);
    availability.failed(error);
  });
  pool.on('connect', (client) =>
    client.on('error', (error) => {
      selector.failed(client, error);
      availability.failed(error);
    }),
  );
  const closing = new Set<() => Promise<void>>();

  /**
   * A pooled connection to a host still in use: connections made to a host that went stale since
   * (a failover) are dropped rather than handed out.
   */
  const acquire = async (): Promise<pg.PoolClient> => {
    for (;;) {
      const client = await pool.connect();
      if (!selector.isStale(client)) return client;
      client.release(true);
    }
  };

  /** Every call reports to the availability tracker: the first failure opens an outage, a success closes it. */
  const tracked = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      const result = await run();
      availability.succeeded();
      return result;
    } catch (error) {
      availability.failed(error);
      throw error;
    }
  };

  /** Connections whose server did not answer in time: closed, and never handed out again. */
  const silent = new WeakSet<pg.Client>();
  /**
   * The error to throw for `error` on `client`. A statement past the client-side limit leaves its
   * connection mid-exchange (the answer may still come, to nobody), so the connection is closed at
   * once: the server rolls back what it was doing when it sees the close, and the pool makes a new
   * one.
   */
  const failure = (client: pg.Client, error: unknown): unknown => {
    if (!isQueryReadTimeout(error) || queryTimeoutMs === undefined) return error;
    silent.add(client);
    client.connection.stream.destroy();
    return new DatabaseNotAnsweringError(queryTimeoutMs, error);
  };
  /** Whether a released connection must be closed rather than kept: its host went stale, or it fell silent. */
  const spent = (client: pg.Client): boolean => selector.isStale(client) || silent.has(client);

  /** A query on `client`; a failure that says its host is stale (read-only, lost) is told to the selector. */
  const queryOn = async <TRow>(client: pg.Client, text: string, values?: readonly unknown[]) => {
    try {
      const name = preparedNames.get(text);
      const res = await client.query<TRow & pg.QueryResultRow>({ name, text, values: values as unknown[] | undefined });
      return { rows: res.rows, rowCount: res.rowCount ?? 0 };
    } catch (error) {
      selector.failed(client, error);
      throw failure(client, error);
    }
  };

  const query = <TRow>(text: string, values?: readonly unknown[]): Promise<{ rows: TRow[]; rowCount: number }> =>
    tracked(async () => {
      const client = await acquire();
      let broken = false;
      try {
        return await queryOn<TRow>(client, text, values);
      } catch (error) {
        broken = spent(client) || isStalePlan(error);
        throw error;
      } finally {
        client.release(broken);
      }
    });

  const onClient = (client: pg.PoolClient): Queryable => ({
    query<TRow>(text: string, values?: readonly unknown[]) {
      return tracked(() => queryOn<TRow>(client, text, values));
    },
    async copyFrom(statement, chunks) {
      // Written straight to the COPY stream, waiting only for drain (a Readable piped in cost a
      // stream round per chunk). The server's refusal (a duplicate key) is thrown as it came; a
      // chunk that throws ends the COPY with CopyFail, and its own error is thrown.
      const copy = client.query(copyFromStdin(statement));
      const done = finished(copy);
      done.catch(() => undefined); // awaited below, unless an earlier error is thrown instead
      const pending = chunks[Symbol.iterator]();
      try {
        for (;;) {
          let next: IteratorResult<Buffer>;
          try {
            next = pending.next();
          } catch (error) {
            copy.destroy(error as Error);
            await done.catch(() => undefined); // the server's answer to CopyFail: the connection is free again
            throw error;
          }
          if (next.done) break;
          // Rejects with the server's error when it refuses the rows mid-stream.
          if (!copy.write(next.value)) await once(copy, 'drain');
        }
        copy.end();
        await done;
      } catch (error) {
        throw failure(client, error);
      }
    },
  });

  /**
   * A LISTEN of its own connection (outside the pool, which it would hold forever), made again with
   * back-off whenever it is lost, until unsubscribed.
   */
  const listen = async (channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> => {
    let client: pg.Client | null = null;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    const connect = async (): Promise<pg.Client> => {
      const c = new selector.Client(clientConfig);
      c.on('notification', (msg) => {
        if (msg.channel === channel) onNotify(msg.payload ?? '');
      });
      c.on('error', (error) => {
        selector.failed(c, error);
        availability.failed(error);
        if (client === c) lost(0);
      });
      try {
        await tracked(async () => {
          await c.connect();
          await c.query(`listen ${pg.escapeIdentifier(channel)}`);
        });
      } catch (error) {
        await c.end().catch(() => {});
        throw error;
      }
      return c;
    };
    const lost = (attempt: number): void => {
      const dead = client;
      client = null;
      void dead?.end().catch(() => {});
      if (stopped) return;
      retry = setTimeout(() => {
        connect().then(
          (c) => {
            if (stopped) return void c.end().catch(() => {});
            client = c;
            onNotify(''); // notifications sent while it was away are lost: the subscriber looks again
          },
          () => lost(attempt + 1),
        );
      }, backoffMs(attempt));
    };
    client = await connect();
    const unsubscribe = async () => {
      stopped = true;
      clearTimeout(retry);
      closing.delete(unsubscribe);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    };
    closing.add(unsubscribe);
    return unsubscribe;
  };

  return {
    kind: 'postgres',
    query,
    async transaction(fn) {
      const client = await tracked(acquire);
      try {
        await queryOn(client, 'begin');
        const result = await fn(onClient(client));
        await queryOn(client, 'commit');
        return result;
      } catch (error) {
        // A silent connection is closed already: its transaction ends with it.
        if (!silent.has(client)) await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release(spent(client));
      }
    },
    async withSession(fn) {
      const client = await tracked(acquire);
      let broken = false;
      let onError: (error: Error) => void = () => undefined;
      const lost = new Promise<Error>((resolve) => (onError = resolve));
      client.on('error', onError);
      const session = onClient(client);
      try {
        return await fn({
          ...session,
          // A connection closed for its silence is lost like one the server ended: its locks go with it.
          async query<TRow>(text: string, values?: readonly unknown[]) {
            try {
              return await session.query<TRow>(text, values);
            } catch (error) {
              if (silent.has(client)) onError(error as Error);
              throw error;
            }
          },
          lost,
        });
      } catch (error) {
        broken = true;
        throw error;
      } finally {
        // Session state (locks, LISTEN) must not leak to the next borrower: a failed session is
        // destroyed, a clean one is reset.
        if (!broken) await client.query('select pg_advisory_unlock_all()').catch(() => (broken = true));
        client.off('error', onError);
        client.release(broken || spent(client));
      }
    },
    listen,
    async close() {
      await Promise.all([...closing].map((unsubscribe) => unsubscribe()));
      await pool.end();
    },
  };
}

/**
 * PGlite is one process's store: a second process opening the same folder would corrupt it. A pid
 * file claims the folder; a live owner makes the second opener fail with a clear message.
 */
function claimDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'opscan.pid');
  try {
    const owner = Number(readFileSync(pidFile, 'utf8'));
    if (owner && owner !== process.pid && isAlive(owner)) {
      throw new Error(`The embedded store ${dataDir} is in use by process ${owner}. Stop it first, or use PostgreSQL (DATABASE_URL).`);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileSync(pidFile, String(process.pid));
  return () => rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function createPgliteDb(dataDir?: string): Promise<Db> {
  const release = dataDir ? claimDataDir(dataDir) : () => {};
  const keepAsText = (value: string) => value;
  const lite = await PGlite.create(dataDir, {
    // Match node-postgres: int8 and numeric as exact strings.
    // bytea as 0x-hex strings (the convention above); PGlite parses bytea[] elements with the bytea parser.
    parsers: { [pgliteTypes.INT8]: keepAsText, [pgliteTypes.NUMERIC]: keepAsText, [pgliteTypes.BYTEA]: hexOfBytea },
    serializers: { [pgliteTypes.BYTEA]: byteaParameter },
  });

  const query = runOn(lite);
  const listening = new Set<() => Promise<void>>();

  return {
    kind: 'pglite',
    query,
    transaction(fn) {
      return lite.transaction(async (tx) => fn({ query: runOn(tx) }));
    },
    // PGlite is one session already, and in-process: it is never lost.
    withSession(fn) {
      return fn({ query, lost: new Promise<Error>(() => undefined) });
    },
    async listen(channel, onNotify) {
      const stopListening = await lite.listen(channel, onNotify);
      const unsubscribe = async () => {
        if (!listening.delete(unsubscribe)) return;
        await stopListening();
      };
      listening.add(unsubscribe);
      return unsubscribe;
    },
    // As on PostgreSQL, closing ends the subscriptions: a subscriber that unsubscribes later (a
    // service closed after the store) finds nothing left to do instead of a closed PGlite.
    async close() {
      await Promise.all([...listening].map((unsubscribe) => unsubscribe()));
      await lite.close();
      release();
    },
  };
}

/** A bytea parameter on PGlite: `\x…` text as node-postgres sends it; a `0x…` string is a caller's mistake. */
function byteaParameter(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('\\x')) {
    throw new Error(`A bytea parameter must be \\x-hex text (bytea(hex)), not ${JSON.stringify(value)?.slice(0, 20)}`);
  }
  return value;
}

type PgliteRunner = Pick<PGlite, 'query' | 'exec'>;

/**
 * Like node-postgres, a query without parameters goes through the simple protocol, which accepts
 * several statements (migrations); with parameters it is one prepared statement.
 */
function runOn(target: PgliteRunner): Queryable['query'] {
  return async (text, values) => {
    if (values === undefined) {
      const results = await target.exec(text);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as never[], rowCount: last?.affectedRows ?? last?.rows.length ?? 0 };
    }
    const res = await target.query(text, values as unknown[]);
    return { rows: res.rows as never[], rowCount: res.affectedRows ?? res.rows.length };
  };
}
