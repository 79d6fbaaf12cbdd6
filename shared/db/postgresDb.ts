/**
 * The PostgreSQL implementation of Db: a `pg` pool that follows the host that fits across a
 * failover, tracks availability, limits each statement, keeps hot statements prepared, and holds
 * LISTEN connections of its own. It registers the bytea type parsers (bytea.ts) with `pg`, and reads
 * a replica's replication lag.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import { backoffMs, trackAvailability } from './availability.js';
import { hexesOfByteaArray, hexOfBytea } from './bytea.js';
import type { Db, DbOptions, Queryable } from './client.js';
import { remainingMs, withinDeadline } from './deadline.js';
import {
  ANSWER_GRACE_MS,
  DatabaseDeadlineError,
  DatabaseNotAnsweringError,
  isQueryReadTimeout,
  isStalePlan,
} from './errorClassification.js';
import { createHostSelector, parseDatabaseUrl } from './hosts.js';

pg.types.setTypeParser(pg.types.builtins.BYTEA, hexOfBytea);
pg.types.setTypeParser(1001 as typeof pg.types.builtins.BYTEA, hexesOfByteaArray);

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
   * (a failover) are dropped rather than handed out. The wait for it ends by the deadline of the work
   * under way (shared/db/deadline.ts) if that comes before the pool's own limit; a connection that
   * comes later goes back to the pool unused.
   */
  const acquire = async (): Promise<pg.PoolClient> => {
    for (;;) {
      const client = await withinDeadline(pool.connect(), (late) => late.release());
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
   * The client-side limit of a statement sent now: its own (the statement timeout and the grace), or
   * what is left before the deadline of the work under way when that is sooner. None is sent once the
   * deadline has passed.
   */
  const statementLimit = (): { ms: number | undefined; byDeadline: boolean } => {
    const left = remainingMs();
    if (left <= 0) throw new DatabaseDeadlineError();
    if (left === Infinity || (queryTimeoutMs !== undefined && queryTimeoutMs <= left)) return { ms: queryTimeoutMs, byDeadline: false };
    return { ms: Math.ceil(left), byDeadline: true };
  };
  /**
   * The error to throw for `error` on `client`. A statement past the client-side limit leaves its
   * connection mid-exchange (the answer may still come, to nobody), so the connection is closed at
   * once: the server rolls back what it was doing when it sees the close, and the pool makes a new
   * one.
   */
  const failure = (client: pg.Client, error: unknown, limit = { ms: queryTimeoutMs, byDeadline: false }): unknown => {
    if (!isQueryReadTimeout(error) || limit.ms === undefined) return error;
    silent.add(client);
    client.connection.stream.destroy();
    return limit.byDeadline ? new DatabaseDeadlineError(error) : new DatabaseNotAnsweringError(limit.ms, error);
  };
  /** Whether a released connection must be closed rather than kept: its host went stale, or it fell silent. */
  const spent = (client: pg.Client): boolean => selector.isStale(client) || silent.has(client);

  /** A query on `client`; a failure that says its host is stale (read-only, lost) is told to the selector. */
  const queryOn = async <TRow>(client: pg.Client, text: string, values?: readonly unknown[]) => {
    const limit = statementLimit();
    try {
      // node-postgres takes query_timeout per query as well as per client (its types omit it).
      const config: pg.QueryConfig & { query_timeout?: number } = {
        name: preparedNames.get(text),
        text,
        values: values as unknown[] | undefined,
        query_timeout: limit.ms,
      };
      const res = await client.query<TRow & pg.QueryResultRow>(config);
      return { rows: res.rows, rowCount: res.rowCount ?? 0 };
    } catch (error) {
      selector.failed(client, error);
      throw failure(client, error, limit);
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
