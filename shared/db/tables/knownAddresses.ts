import type { Queryable } from '../client.js';

/**
 * `known_addresses`: the addresses whose every token transfer is indexed under
 * INDEXER_TRANSFERS=known (op senders, paymasters, bundlers, factories), and how far back their
 * token logs were read.
 */

export type KnownAddress = { address: string; firstBlock: number };

/** Every known address of the network (the indexer keeps them in memory to filter token logs). */
export async function listAll(db: Queryable, chainId: number): Promise<string[]> {
  const { rows } = await db.query<{ address: string }>(`select address from known_addresses where chain_id = $1`, [chainId]);
  return rows.map((r) => r.address);
}

/** Records addresses seen in a batch; the first sighting wins (on conflict nothing changes). */
export async function insertMany(db: Queryable, chainId: number, rows: KnownAddress[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into known_addresses (chain_id, address, first_block)
     select $1, * from unnest($2::text[], $3::bigint[]) on conflict do nothing`,
    [chainId, rows.map((r) => r.address), rows.map((r) => r.firstBlock)],
  );
}

/** Up to `limit` addresses whose earlier token logs were not read yet, oldest first; `excluding` a group being read. */
export async function listPendingBackfill(db: Queryable, chainId: number, limit: number, excluding: string[] = []): Promise<string[]> {
  const { rows } = await db.query<{ address: string }>(
    `select address from known_addresses
      where chain_id = $1 and backfilled_to is null and address <> all($3::text[])
      order by first_block, address limit $2`,
    [chainId, limit, excluding],
  );
  return rows.map((r) => r.address);
}

export async function markBackfilled(db: Queryable, chainId: number, addresses: string[], toBlock: number): Promise<void> {
  await db.query(`update known_addresses set backfilled_to = $3 where chain_id = $1 and address = any($2::text[])`, [
    chainId,
    addresses,
    toBlock,
  ]);
}

/**
 * Under INDEXER_TRANSFERS=ops plain transactions' transfers are not read: every address's history
 * is read again once the indexer runs with known.
 */
export async function resetBackfill(db: Queryable, chainId: number): Promise<void> {
  await db.query(`update known_addresses set backfilled_to = null where chain_id = $1 and backfilled_to is not null`, [chainId]);
}

/** A reorg removed the blocks above: addresses first seen there are seen again when re-indexed. */
export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from known_addresses where chain_id = $1 and first_block > $2`, [chainId, blockNumber]);
}
