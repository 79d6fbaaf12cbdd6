import type { Queryable } from '../client.js';

/**
 * `indexer_members`: the indexer processes sharing this database, each kept alive
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

/** `databaseUrl` with this member's application_name on every session it opens. */
export function sessionUrl(databaseUrl: string, memberId: string): string {
  return `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}application_name=${encodeURIComponent(sessionName(memberId))}`;
}

/**
 * Removes the dead members and answers their ids: those without a session left (a process that
 * crashed or was killed: its connections closed with it) and those silent for `ttlMs` (a host gone
 * without closing them — their sessions are ended here, freeing their writer locks). Two survivors
 * may run it at once: each row is removed by one of them.
 */
export async function removeDead(db: Queryable, ttlMs: number): Promise<string[]> {
  const { rows } = await db.query<{ member_id: string }>(
    `delete from indexer_members m
      where m.heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)
         or not exists (select 1 from pg_stat_activity a where a.application_name = $2 || m.member_id)
      returning m.member_id`,
    [ttlMs, SESSION_PREFIX],
  );
  for (const { member_id } of rows)
    // In the select list, the call runs for the rows the filter kept only.
    await db.query('select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = $1', [sessionName(member_id)]);
  return rows.map((r) => r.member_id);
}

/** Which member's session holds each writer lock now (locks of class `lockClass`, keyed by chain id): chain id → member id. */
export async function listWriters(db: Queryable, lockClass: number): Promise<Map<number, string>> {
  const { rows } = await db.query<{ chain_id: string; application_name: string }>(
    `select l.objid::bigint as chain_id, a.application_name
       from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and l.classid = $1 and l.objsubid = 1 and starts_with(a.application_name, $2)`,
    [lockClass, SESSION_PREFIX],
  );
  return new Map(rows.map((r) => [Number(r.chain_id), r.application_name.slice(SESSION_PREFIX.length)]));
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
