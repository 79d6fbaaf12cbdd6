/**
 * A network's writer lock: a PostgreSQL session advisory lock keyed by the network's chain id,
 * held on a session of its own by the one process that writes the network's data (the indexer's
 * runner of that network, or the CLI's backfill) for as long as that session lives; it goes with
 * the session, so a crashed writer's lock is free again. The key's high 32 bits are
 * WRITER_LOCK_CLASS (pg_locks' classid), by which the indexer processes see who writes which
 * network (indexer/membership.ts). The embedded PGlite store is one process: there the lock is
 * always taken at once.
 */
import type { Db, Queryable } from '../shared/db/client.js';

/** The high 32 bits of every writer lock's key (pg_locks' classid). */
export const WRITER_LOCK_CLASS = 0x4337;

/** Advisory-lock key of a network's writer: WRITER_LOCK_CLASS and the chain id. */
export const writerLockKey = (chainId: number): string => ((BigInt(WRITER_LOCK_CLASS) << 32n) + BigInt(chainId)).toString();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type WriterLockWait = {
  /** How long to wait before asking again while another session holds the lock. */
  retryMs: number;
  /** Called once, when the lock is first found held by another session; it may throw to give up waiting. */
  onHeld?: () => void;
  /** The caller is stopping: `requested()` ends the wait before the next ask, `signal` cuts the pause short. */
  stop?: { requested: () => boolean; signal: Promise<void> };
};

/**
 * Takes `chainId`'s writer lock on `session`, asking again every `retryMs` while another session
 * holds it. Resolves to true once held, false if the caller stopped first.
 */
export async function takeWriterLock(db: Db, session: Queryable, chainId: number, wait: WriterLockWait): Promise<boolean> {
  if (db.kind !== 'postgres') return true;
  for (let asked = 0; !wait.stop?.requested(); asked++) {
    const { rows } = await session.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [
      writerLockKey(chainId),
    ]);
    if (rows[0]?.locked) return true;
    if (asked === 0) wait.onHeld?.();
    await Promise.race([sleep(wait.retryMs), ...(wait.stop ? [wait.stop.signal] : [])]);
  }
  return false;
}
