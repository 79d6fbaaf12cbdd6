import type { Db } from '../shared/db/client.js';
import * as outboxEvents from '../shared/db/tables/outboxEvents.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import type { Logger } from '../shared/log.js';

/** Settled deliveries (and their attempt logs) are kept this long for getWebhookDeliveries and replay. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;
/** OUTBOX_RETENTION_HOURS' default: matched outbox events are kept a day (for an operator to look at). */
export const OUTBOX_RETENTION_HOURS = 24;
export const PRUNE_INTERVAL_MS = 3600 * 1000;
/** Rows per DELETE: short transactions, no long lock on a big table. */
const PRUNE_CHUNK = 5000;

/** Runs `deleteChunk` until a chunk comes back short; answers the rows deleted. */
async function deleteInChunks(deleteChunk: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteChunk(PRUNE_CHUNK);
    total += deleted;
    if (deleted < PRUNE_CHUNK) return total;
  }
}

/** Deletes settled deliveries older than the retention; returns how many. */
export async function pruneDeliveries(db: Db, log: Logger, now = new Date(), retentionMs = DELIVERY_RETENTION_MS): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  const total = await deleteInChunks((limit) => webhookDeliveries.deleteSettledBefore(db, cutoff, limit));
  if (total > 0) log.debug({ deleted: total, before: cutoff.toISOString() }, 'pruned old webhook deliveries');
  return total;
}

/**
 * Deletes outbox events the matcher has passed and recorded more than `retentionHours` ago; returns
 * how many. Nothing else reads them once matched: the matcher moves its cursor only past events at
 * least the network's finality depth below the indexed head (reorg notices, which concern ops
 * already sent, excepted), its deliveries carry their own body (replay sends that), reorg notices
 * find the ops they retract in webhook_deliveries, and dead letters keep their own copy.
 */
export async function pruneOutbox(db: Db, log: Logger, now = new Date(), retentionHours = OUTBOX_RETENTION_HOURS): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionHours * 3600 * 1000);
  const total = await deleteInChunks((limit) => outboxEvents.deleteMatchedBefore(db, cutoff, limit));
  if (total > 0) log.debug({ deleted: total, before: cutoff.toISOString() }, 'pruned matched outbox events');
  return total;
}
