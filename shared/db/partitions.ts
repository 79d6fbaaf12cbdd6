import type { Queryable } from './client.js';

/**
 * The per-network tables are list-partitioned by chain id: a network's rows live in
 * partitions of its own (`user_ops_<chainId>`, …), which can be vacuumed, reindexed, detached or
 * dropped without touching other networks, and queries naming a chain read only them. Rows of a
 * chain without partitions go to the DEFAULT partitions, so no write ever fails for want of one.
 */

/** Gives the network its own partitions, moving any rows it has in the default ones; idempotent. */
export async function ensureChainPartitions(db: Queryable, chainId: number): Promise<void> {
  await db.query('select opscan_ensure_chain_partitions($1)', [chainId]);
}

/** The partitions a network has, table by table (operators, tests). */
export async function listChainPartitions(db: Queryable, chainId: number): Promise<string[]> {
  const { rows } = await db.query<{ partition: string }>(
    `select c.relname as partition from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where c.relname = any(select t || '_' || $1::bigint from unnest(opscan_partitioned_tables()) t) order by 1`,
    [chainId],
  );
  return rows.map((r) => r.partition);
}
