import { bytea, type Queryable } from '../client.js';

/**
 * `known_address_filters`: a network's filter of known addresses as the indexer last stored it
 * (INDEXER_TRANSFERS=known; see indexer/sync/knownAddressSet.ts), read at start
 * in one query.
 */

export type KnownAddressFilter = {
  layout: number;
  /** Every known address first seen at or below this block is in the bits. */
  throughBlock: number;
  firstCapacity: number;
  falsePositiveRate: number;
  stageCounts: number[];
  bits: Buffer;
};

/** Bytes of the bits per known_address_filter_parts row. */
const PART_BYTES = 1 << 20;

export async function find(db: Queryable, chainId: number): Promise<KnownAddressFilter | null> {
  const { rows } = await db.query<{
    layout: number;
    through_block: string;
    first_capacity: string;
    false_positive_rate: number;
    stage_counts: string[];
    bits: string;
  }>(
    // base64: two thirds of the text hex would be (the parts are text on the wire either way).
    `select f.layout, f.through_block, f.first_capacity, f.false_positive_rate, f.stage_counts, encode(p.bits, 'base64') as bits
       from known_address_filters f join known_address_filter_parts p using (chain_id)
      where f.chain_id = $1 order by p.part`,
    [chainId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    layout: row.layout,
    throughBlock: Number(row.through_block),
    firstCapacity: Number(row.first_capacity),
    falsePositiveRate: Number(row.false_positive_rate),
    stageCounts: row.stage_counts.map(Number),
    bits: Buffer.concat(rows.map((r) => Buffer.from(r.bits, 'base64'))),
  };
}

/** Replaces the network's stored filter (in the caller's transaction: its parts are written one by one). */
export async function save(tx: Queryable, chainId: number, filter: KnownAddressFilter): Promise<void> {
  await tx.query(
    `insert into known_address_filters (chain_id, layout, through_block, first_capacity, false_positive_rate, stage_counts)
     values ($1, $2, $3, $4, $5, $6)
     on conflict (chain_id) do update set layout = excluded.layout, through_block = excluded.through_block,
       first_capacity = excluded.first_capacity, false_positive_rate = excluded.false_positive_rate,
       stage_counts = excluded.stage_counts, saved_at = now()`,
    [chainId, filter.layout, filter.throughBlock, filter.firstCapacity, filter.falsePositiveRate, filter.stageCounts],
  );
  await tx.query(`delete from known_address_filter_parts where chain_id = $1`, [chainId]);
  for (let part = 0; part * PART_BYTES < filter.bits.length; part++) {
    const bits = filter.bits.subarray(part * PART_BYTES, (part + 1) * PART_BYTES);
    await tx.query(`insert into known_address_filter_parts (chain_id, part, bits) values ($1, $2, $3)`, [
      chainId,
      part,
      bytea(`0x${bits.toString('hex')}`),
    ]);
  }
}

/**
 * The known addresses above `blockNumber` were deleted (a reorg): the stored filter may lack those
 * seen again there when re-indexed, so they are read from the table at the next start.
 */
export async function lowerThroughBlock(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`update known_address_filters set through_block = $2 where chain_id = $1 and through_block > $2`, [chainId, blockNumber]);
}
