import { OUTBOX_CHANNEL, type NewOutboxEvent } from '../../outboxEvents.js';
import type { Queryable } from '../client.js';

/**
 * Writes of `outbox_events` (the indexer), in the transaction of the rows they announce; the
 * webhook dispatcher reads them in id order (webhookOutboxCursors.ts). A NOTIFY on OUTBOX_CHANNEL
 * with the chain id wakes it when that transaction commits. The payloads follow the contract in
 * shared/outboxEvents.ts.
 */

export async function insertMany(db: Queryable, chainId: number, events: NewOutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  // with ordinality keeps the ids in the order given (the dispatcher's delivery order).
  await db.query(
    `insert into outbox_events (chain_id, type, block_number, user_op_hash, payload)
     select $1, u.type, u.block_number, u.hash, u.payload::jsonb
     from unnest($2::text[], $3::bigint[], $4::text[], $5::text[]) with ordinality as u(type, block_number, hash, payload, n)
     order by u.n`,
    [chainId, events.map((e) => e.type), events.map((e) => e.blockNumber), events.map((e) => e.userOpHash), events.map((e) => JSON.stringify(e.payload))],
  );
  await db.query(`select pg_notify($1, $2)`, [OUTBOX_CHANNEL, String(chainId)]);
}
