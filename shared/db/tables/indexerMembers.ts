import type { Queryable } from '../client.js';

/**
 * `indexer_members` (migration 0037): the indexer processes sharing this database, each kept alive
 * by its heartbeat. Time is the database's own (`now()`), so the processes' clocks never matter.
 */

export type IndexerMember = { memberId: string; chainIds: number[] };

const SESSION_PREFIX = 'opscan-indexer/';
/** The PostgreSQL `application_name` of a member's network sessions (ended by a survivor when it dies). */
export const sessionName = (memberId: string): string => `${SESSION_PREFIX}${memberId}`;

/** Writes (or refreshes) a member's row: it is alive now and may index `chainIds`. */
export async function beat(db: Queryable, member: IndexerMember): Promise<void> {
  await db.query(
    `insert into indexer_members (member_id, chain_ids) values ($1, $2::bigint[])
     on conflict (member_id) do update set chain_ids = excluded.chain_ids, heartbeat_at = now()`,
    [member.memberId, member.chainIds],
  );
}

/**
 * Removes the members silent for `ttlMs` and ends their database sessions still open (a host gone
 * without closing its connections keeps its writer locks until then); answers the ids removed.
 * Two survivors may run it at once: a row is removed, and its sessions ended, by one of them.
 */
export async function removeSilent(db: Queryable, ttlMs: number): Promise<string[]> {
  const { rows } = await db.query<{ member_id: string }>(
    'delete from indexer_members where heartbeat_at < now() - make_interval(secs => $1::float8 / 1000) returning member_id',
    [ttlMs],
  );
  for (const { member_id } of rows)
    // In the select list, the call runs for the rows the filter kept only.
    await db.query('select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = $1', [sessionName(member_id)]);
  return rows.map((r) => r.member_id);
}

/** The members alive now (heartbeat within `ttlMs`), in id order. */
export async function listAlive(db: Queryable, ttlMs: number): Promise<IndexerMember[]> {
  const { rows } = await db.query<{ member_id: string; chain_ids: string[] }>(
    `select member_id, chain_ids from indexer_members
      where heartbeat_at >= now() - make_interval(secs => $1::float8 / 1000) order by member_id`,
    [ttlMs],
  );
  return rows.map((r) => ({ memberId: r.member_id, chainIds: r.chain_ids.map(Number) }));
}

/** A member leaving on purpose (SIGTERM): the others take its networks at their next beat. */
export async function remove(db: Queryable, memberId: string): Promise<void> {
  await db.query('delete from indexer_members where member_id = $1', [memberId]);
}
