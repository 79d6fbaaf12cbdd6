import { OUTBOX_CHANNEL, type NewOutboxEvent } from '../../outboxEvents.js';
import type { Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import type { Column } from '../unnest.js';

/**
 * Writes of `outbox_events` (the indexer), in the transaction of the rows they announce; the
 * webhook dispatcher reads them in id order (webhookOutboxCursors.ts). A NOTIFY on OUTBOX_CHANNEL
 * with the chain id wakes it when that transaction commits. The payloads follow the contract in
 * shared/outboxEvents.ts.
 */

const NEW_COLUMNS: ReadonlyArray<Column<NewOutboxEvent>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['type', 'text', (e) => e.type],
  ['block_number', 'bigint', (e) => e.blockNumber],
  ['user_op_hash', 'bytea', (e) => e.userOpHash],
  ['payload', 'text', (e) => JSON.stringify(e.payload), (v) => `${v}::jsonb`],
];

/**
 * Appends the events in the order given, which is their id order (the dispatcher's delivery
 * order): COPY takes the ids from the sequence row by row, and PGlite's multi-row insert keeps
 * the unnested order.
 */
export async function insertMany(db: Queryable, chainId: number, events: NewOutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await copyRows(db, 'outbox_events', NEW_COLUMNS, { rows: events, chainId: chainId });
  await db.query(`select pg_notify($1, $2)`, [OUTBOX_CHANNEL, String(chainId)]);
}

/**
 * Deletes, per chain, up to `limit` events the webhook matcher has passed (id at or below the chain's
 * webhook_outbox_cursors row) and recorded before `cutoff`; answers how many went. A chain without
 * a cursor (no dispatcher ever ran) keeps its events: a dispatcher started later reads them.
 */
export async function deleteMatchedBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `delete from outbox_events e
       using webhook_outbox_cursors c,
             lateral (select o.id from outbox_events o
                       where o.chain_id = c.chain_id and o.id <= c.last_event_id and o.created_at < $1
                       order by o.id limit $2) passed
      where e.chain_id = c.chain_id and e.id = passed.id`,
    [cutoff, limit],
  );
  return rowCount;
}
