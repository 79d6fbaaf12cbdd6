import { bytea, type Queryable } from '../client.js';

/** `daily_active_wallets`: the distinct senders of each UTC day (feeds daily_stats.active_wallets). */

/** Inserts the (day, address) pairs not yet recorded; returns those that were new. */
export async function insertMany(
  db: Queryable,
  chainId: number,
  rows: Array<{ day: number; address: string }>,
): Promise<Array<{ day: number; address: string }>> {
  if (rows.length === 0) return [];
  const { rows: inserted } = await db.query<{ day: number; address: string }>(
    `insert into daily_active_wallets (chain_id, day, address)
     select $1, * from unnest($2::integer[], $3::bytea[]) on conflict do nothing returning day, address`,
    [chainId, rows.map((r) => r.day), rows.map((r) => bytea(r.address))],
  );
  return inserted;
}

/** Rebuilds the senders of `days` from user_ops (after a reorg removed rows). */
export async function recompute(db: Queryable, chainId: number, days: number[]): Promise<void> {
  if (days.length === 0) return;
  await db.query(`delete from daily_active_wallets where chain_id = $1 and day = any($2::integer[])`, [chainId, days]);
  await db.query(
    `insert into daily_active_wallets (chain_id, day, address)
     select distinct chain_id, (block_time / 86400)::integer, sender from user_ops
     where chain_id = $1 and (block_time / 86400)::integer = any($2::integer[])`,
    [chainId, days],
  );
}
