import { bytea, type Queryable } from '../client.js';
import { unnestInsert, type Column } from '../unnest.js';

/**
 * `blocks`: the recent headers the indexer compares with the chain to detect reorgs (the reorg
 * window and each batch's first and last block).
 */

export type BlockHeader = { number: number; hash: string; parentHash: string; timestamp: number };

type BlockRow = { number: string; hash: string; parent_hash: string; timestamp: string };

const toBlockHeader = (r: BlockRow): BlockHeader => ({
  number: Number(r.number),
  hash: r.hash,
  parentHash: r.parent_hash,
  timestamp: Number(r.timestamp),
});

const COLUMNS: ReadonlyArray<Column<BlockHeader>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['number', 'bigint', (b) => b.number],
  ['hash', 'bytea', (b) => b.hash],
  ['parent_hash', 'bytea', (b) => b.parentHash],
  ['timestamp', 'bigint', (b) => b.timestamp],
];

export async function upsertMany(db: Queryable, chainId: number, headers: BlockHeader[]): Promise<void> {
  if (headers.length === 0) return;
  const { text, values } = unnestInsert(
    'blocks',
    COLUMNS,
    { rows: headers, chainId },
    'on conflict (chain_id, number) do update set hash = excluded.hash, parent_hash = excluded.parent_hash, timestamp = excluded.timestamp',
  );
  await db.query(text, values);
}

/** Stored headers at or below `number`, highest first (the candidates for a common ancestor). */
export async function listUpTo(db: Queryable, chainId: number, number: number, limit: number): Promise<BlockHeader[]> {
  const { rows } = await db.query<BlockRow>(
    `select number, hash, parent_hash, timestamp from blocks where chain_id = $1 and number <= $2 order by number desc limit $3`,
    [chainId, number, limit],
  );
  return rows.map(toBlockHeader);
}

/**
 * The stored header with this hash (a GraphQL query's `block: {hash}`, in any case). Headers are kept
 * for the reorg window and each batch's first and last block, a few hundred rows a network: no index
 * on the hash. What is no hex of whole bytes is no stored hash (and no bytea value).
 */
export async function findByHash(db: Queryable, chainId: number, hash: string): Promise<BlockHeader | null> {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(hash)) return null;
  const { rows } = await db.query<BlockRow>(
    `select number, hash, parent_hash, timestamp from blocks where chain_id = $1 and hash = $2 order by number desc limit 1`,
    [chainId, bytea(hash)],
  );
  return rows[0] ? toBlockHeader(rows[0]) : null;
}

export async function deleteAbove(db: Queryable, chainId: number, number: number): Promise<void> {
  await db.query(`delete from blocks where chain_id = $1 and number > $2`, [chainId, number]);
}

/** Drops headers below the reorg window (a reorg reaching them is refused anyway). */
export async function deleteBelow(db: Queryable, chainId: number, number: number): Promise<void> {
  await db.query(`delete from blocks where chain_id = $1 and number < $2`, [chainId, number]);
}
