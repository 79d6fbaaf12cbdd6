/**
 * Whether PostgreSQL answers, as this process's clients see it. A restart, a crash or a failover of
 * the database is weather for opscan's processes, not death: the pool's clients report each failure
 * here, the first one opens an outage (one warn line, `opscan_db_outages_total`, the
 * `opscan_db_available` gauge at 0) and the next query that succeeds closes it (one info line with
 * its length). Work in flight retries through `retryWhileUnavailable`; processes starting while the
 * database is away wait for it with `waitForDatabase` (bounded by DB_STARTUP_TIMEOUT_MS).
 */
import { Counter, Gauge } from 'prom-client';
import type { Logger } from '../log.js';
import { isDatabaseUnavailable, type Queryable } from './client.js';

const outages = new Counter({
  name: 'opscan_db_outages_total',
  help: 'Times the database stopped answering (a restart, a crash, a failover, a cut network), as this process saw it.',
  labelNames: ['database'],
});
const available = new Gauge({
  name: 'opscan_db_available',
  help: 'Whether the database answered the last query of this process (1) or an outage is under way (0).',
  labelNames: ['database'],
});

export type Availability = {
  /** A query, a connection attempt or a connection failed; only unavailability errors count. */
  failed(error: unknown): void;
  /** A query succeeded: the database is back if it was away. */
  succeeded(): void;
  readonly available: boolean;
};

/** The tracker of one database (`name` labels its metrics: `primary`, a replica's host). */
export function trackAvailability(name: string, log?: Logger): Availability {
  let downSince: number | null = null;
  available.set({ database: name }, 1);
  outages.inc({ database: name }, 0);
  return {
    failed(error) {
      if (downSince !== null || !isDatabaseUnavailable(error)) return;
      downSince = Date.now();
      outages.inc({ database: name });
      available.set({ database: name }, 0);
      log?.warn({ database: name, reason: (error as Error).message }, 'database unavailable; retrying until it is back');
    },
    succeeded() {
      if (downSince === null) return;
      log?.info({ database: name, downMs: Date.now() - downSince }, 'database available again');
      downSince = null;
      available.set({ database: name }, 1);
    },
    get available() {
      return downSince === null;
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Back-off between retries while the database is away: from 100 ms, doubling, at most 2 s. */
export function backoffMs(attempt: number, maxMs = 2_000): number {
  return Math.min(maxMs, 100 * 2 ** Math.min(attempt, 10));
}

/**
 * Runs `fn`, again after a back-off while it fails because the database is unavailable, until it
 * succeeds, fails otherwise, or `deadline` (epoch ms) passes; then the last error is thrown.
 * For work that must land once the database returns (a webhook attempt already sent, say).
 */
export async function retryWhileUnavailable<T>(fn: () => Promise<T>, options: { deadline: number }): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + backoffMs(attempt) > options.deadline) throw error;
      await sleep(backoffMs(attempt));
    }
  }
}

/**
 * At start, before anything reads the database: waits while it is unreachable (down, starting up,
 * refusing connections), logging once what it waits for, and throws after `timeoutMs` (0: at once).
 * Any other error (bad credentials, a missing database) is thrown at once.
 */
export async function waitForDatabase(db: Queryable, options: { timeoutMs: number; log: Logger }): Promise<void> {
  const startedAt = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      await db.query('select 1');
      if (attempt > 0) options.log.info({ waitedMs: Date.now() - startedAt }, 'database reachable; starting');
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const waited = Date.now() - startedAt;
      if (waited + backoffMs(attempt) > options.timeoutMs) {
        throw new Error(`The database is unreachable (${(error as Error).message}); gave up after ${waited} ms (DB_STARTUP_TIMEOUT_MS)`, {
          cause: error,
        });
      }
      if (attempt === 0) {
        options.log.warn(
          { reason: (error as Error).message, timeoutMs: options.timeoutMs },
          'database unreachable at start; waiting for it (DB_STARTUP_TIMEOUT_MS)',
        );
      }
      await sleep(backoffMs(attempt));
    }
  }
}
