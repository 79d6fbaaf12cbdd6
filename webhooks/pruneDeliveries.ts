import type { Db } from '../shared/db/client.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import type { Logger } from '../shared/log.js';

/** Settled deliveries (and their attempt logs) are kept this long for getWebhookDeliveries and replay. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;
export const PRUNE_INTERVAL_MS = 3600 * 1000;
/** Rows per DELETE: short transactions, no long lock on a big table. */
const PRUNE_CHUNK = 5000;

/** Deletes settled deliveries older than the retention; returns how many. */
export async function pruneDeliveries(db: Db, log: Logger, now = new Date(), retentionMs = DELIVERY_RETENTION_MS): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  let total = 0;
  for (;;) {
    const deleted = await webhookDeliveries.deleteSettledBefore(db, cutoff, PRUNE_CHUNK);
    total += deleted;
    if (deleted < PRUNE_CHUNK) break;
  }
  if (total > 0) log.info({ deleted: total, before: cutoff.toISOString() }, 'pruned old webhook deliveries');
  return total;
}
