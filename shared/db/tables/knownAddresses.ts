import { bytea, type Queryable } from '../client.js';
import { ADDRESS_HEX_DIGITS } from '../../models/primitives.js';
import * as knownAddressFilters from './knownAddressFilters.js';

/**
 * `known_addresses`: the addresses whose every token transfer is indexed under
 * INDEXER_TRANSFERS=known (op senders, paymasters, bundlers, factories), and how far back their
 * token logs were read.
 */

/**
 * backfillTo: the last block the transfer backfill must read (the forward pass reads an address's
 * logs from the range it is first seen in, so it records firstBlock - 1). Null: up to the cursor
 * when read, for an address whose later logs the forward pass did not read (one recorded under
 * INDEXER_TRANSFERS=ops, or before the column existed).
 */
export type KnownAddress = { address: string; firstBlock: number; backfillTo: number | null };

/**
 * A page of the network's known addresses, the `limit` first after `after` (null: from the first)
 * in address order, their hex digits one after the other in `hex` (ADDRESS_HEX_DIGITS each, no
 * `0x`, in no particular order), and the last of them (where the next page starts). One value, not
 * a row each: the indexer reads every address at start (to build its filter), and 10 million rows
 * cost the client far more to parse than 20 values. bytea has no max(): the last is the greatest
 * hex, compared byte-wise (collation C), which is the bytes' order.
 */
export async function listPage(
  db: Queryable,
  chainId: number,
  after: string | null,
  limit: number,
): Promise<{ hex: string; count: number; last: string | null }> {
  const { rows } = await db.query<{ bytes: string | null; last: string | null }>(
    `select string_agg(address, ''::bytea) as bytes, max(encode(address, 'hex') collate "C") as last from (
       select address from known_addresses where chain_id = $1 and address > $2 order by address limit $3) page`,
    [chainId, bytea(after ?? '0x'), limit],
  );
  const hex = rows[0]?.bytes?.slice(2) ?? '';
  const last = rows[0]?.last ?? null;
  return { hex, count: hex.length / ADDRESS_HEX_DIGITS, last: last === null ? null : `0x${last}` };
}

/** Where a page of listFirstSeenAbove ends (and the next starts). */
export type FirstSeen = { firstBlock: number; address: string };

/**
 * Like listPage, the network's addresses first seen above `aboveBlock` (those a stored filter
 * lacks; see knownAddressFilters), the `limit` first after `after` in (first block, address) order
 * (the index known_addresses_first_seen), in `hex` one after the other in that order.
 */
export async function listFirstSeenAbove(
  db: Queryable,
  chainId: number,
  page: { aboveBlock: number; after: FirstSeen | null; limit: number },
): Promise<{ hex: string; count: number; last: FirstSeen | null }> {
  const { rows } = await db.query<{ bytes: string | null; last_block: string | null }>(
    `select string_agg(address, ''::bytea order by first_block, address) as bytes, max(first_block) as last_block from (
       select first_block, address from known_addresses
        where chain_id = $1 and first_block >= $2 and (first_block, address) > ($2, $3::bytea)
        order by first_block, address limit $4) page`,
    [chainId, page.after?.firstBlock ?? page.aboveBlock + 1, bytea(page.after?.address ?? '0x'), page.limit],
  );
  const hex = rows[0]?.bytes?.slice(2) ?? '';
  const lastBlock = rows[0]?.last_block ?? null;
  return {
    hex,
    count: hex.length / ADDRESS_HEX_DIGITS,
    last: lastBlock === null ? null : { firstBlock: Number(lastBlock), address: `0x${hex.slice(-ADDRESS_HEX_DIGITS)}` },
  };
}

/** Which of `addresses` are known on the network. */
export async function findKnown(db: Queryable, chainId: number, addresses: string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const { rows } = await db.query<{ address: string }>(
    `select address from known_addresses where chain_id = $1 and address = any($2::bytea[])`,
    [chainId, addresses.map((a) => bytea(a))],
  );
  return new Set(rows.map((r) => r.address));
}

/** Records addresses seen in a batch; the first sighting wins (on conflict nothing changes). */
export async function insertMany(db: Queryable, chainId: number, rows: KnownAddress[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into known_addresses (chain_id, address, first_block, backfill_to)
     select $1, * from unnest($2::bytea[], $3::bigint[], $4::bigint[]) on conflict do nothing`,
    [chainId, rows.map((r) => bytea(r.address)), rows.map((r) => r.firstBlock), rows.map((r) => r.backfillTo)],
  );
}

/** Up to `limit` addresses whose earlier token logs were not read yet, oldest first; `excluding` a group being read. */
export async function listPendingBackfill(
  db: Queryable,
  chainId: number,
  limit: number,
  excluding: string[] = [],
): Promise<KnownAddress[]> {
  const { rows } = await db.query<{ address: string; first_block: string; backfill_to: string | null }>(
    `select address, first_block, backfill_to from known_addresses
      where chain_id = $1 and backfilled_to is null and address <> all($3::bytea[])
      order by first_block, address limit $2`,
    [chainId, limit, excluding.map((a) => bytea(a))],
  );
  return rows.map((r) => ({
    address: r.address,
    firstBlock: Number(r.first_block),
    backfillTo: r.backfill_to === null ? null : Number(r.backfill_to),
  }));
}

export async function markBackfilled(db: Queryable, chainId: number, addresses: string[], toBlock: number): Promise<void> {
  await db.query(`update known_addresses set backfilled_to = $3 where chain_id = $1 and address = any($2::bytea[])`, [
    chainId,
    addresses.map((a) => bytea(a)),
    toBlock,
  ]);
}

/**
 * Under INDEXER_TRANSFERS=ops plain transactions' transfers are not read: every address's history
 * is read again once the indexer runs with known.
 */
export async function resetBackfill(db: Queryable, chainId: number): Promise<void> {
  await db.query(
    `update known_addresses set backfilled_to = null, backfill_to = null
      where chain_id = $1 and (backfilled_to is not null or backfill_to is not null)`,
    [chainId],
  );
}

/**
 * A reorg removed the blocks above: addresses first seen there are seen again when re-indexed. The
 * stored filter's through_block comes down with them, in the same transaction, so that what the
 * re-indexed blocks make known is read at the next start whatever the stored bits hold.
 */
export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from known_addresses where chain_id = $1 and first_block > $2`, [chainId, blockNumber]);
  await knownAddressFilters.lowerThroughBlock(db, chainId, blockNumber);
}
