import type { Queryable } from '../client.js';

/** Creates the chain's cursor at the start of the outbox if it has none. */
export async function ensure(db: Queryable, chainId: number): Promise<void> {
  await db.query(`insert into webhook_outbox_cursors (chain_id) values ($1) on conflict (chain_id) do nothing`, [chainId]);
}

/**
 * Locks the chain's cursor for the caller's transaction and returns the last outbox id handled;
 * null when another dispatcher holds it (that one is matching this chain right now).
 */
export async function lock(tx: Queryable, chainId: number): Promise<number | null> {
  const { rows } = await tx.query<{ last_event_id: string }>(
    `select last_event_id from webhook_outbox_cursors where chain_id = $1 for update skip locked`,
    [chainId],
  );
  return rows[0] ? Number(rows[0].last_event_id) : null;
}

export async function advance(tx: Queryable, chainId: number, lastEventId: number): Promise<void> {
  await tx.query(`update webhook_outbox_cursors set last_event_id = $2, updated_at = now() where chain_id = $1`, [chainId, lastEventId]);
}

/**
 * An outbox row as the indexer wrote it. The payload is whatever JSON is stored (both drivers parse
 * jsonb): its shape depends on `type` and is checked by the dispatcher (shared/outboxEvents.ts).
 */
export type OutboxEvent = {
  id: number;
  chainId: number;
  type: string;
  blockNumber: number;
  userOpHash: string | null;
  payload: unknown;
  createdAt: Date;
};

/**
 * The chain's outbox events after `afterId`, in id order. The outbox belongs to the indexer; this is
 * the dispatcher's one read of it, next to the cursor that says where to read from.
 */
export async function listEventsAfter(db: Queryable, chainId: number, afterId: number, limit: number): Promise<OutboxEvent[]> {
  const { rows } = await db.query<{
    id: string;
    chain_id: string;
    type: string;
    block_number: string;
    user_op_hash: string | null;
    payload: unknown;
    created_at: Date | string;
  }>(
    `select id, chain_id, type, block_number, user_op_hash, payload, created_at from outbox_events
      where chain_id = $1 and id > $2 order by id limit $3`,
    [chainId, afterId, limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    chainId: Number(r.chain_id),
    type: r.type,
    blockNumber: Number(r.block_number),
    userOpHash: r.user_op_hash,
    payload: r.payload,
    createdAt: new Date(r.created_at),
  }));
}

/** The last block the indexer fully wrote on the chain (indexer_state), or null before its first batch. */
export async function findIndexedBlock(db: Queryable, chainId: number): Promise<number | null> {
  const { rows } = await db.query<{ indexed_block: string }>(`select indexed_block from indexer_state where chain_id = $1`, [chainId]);
  return rows[0] ? Number(rows[0].indexed_block) : null;
}
