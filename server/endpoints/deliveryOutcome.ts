import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../shared/db/client.js';
import * as webhookAttempts from '../../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import { AppError } from '../../shared/errors.js';
import type { WebhookDelivery } from '../../shared/models/webhookDelivery.js';

/** How long testWebhook and replayWebhookDelivery wait for the dispatcher's attempt (a send times out after 15 s). */
const WAIT_FOR_ATTEMPT_MS = 20_000;
const POLL_MS = 50;

/**
 * The delivery once a dispatcher logged an attempt numbered above `after` (0: its first), or as it
 * stands when the wait ends (still pending: no dispatcher is running, or it is busy).
 */
export async function waitForAttempt(db: Queryable, deliveryId: string, after: number): Promise<WebhookDelivery> {
  const deadline = Date.now() + WAIT_FOR_ATTEMPT_MS;
  for (;;) {
    // Attempts first: the dispatcher logs an attempt and settles its delivery in one transaction, so
    // a delivery read after the attempt shows that attempt's outcome (read before, it may be stale).
    const attempts = await webhookAttempts.listByDeliveries(db, [deliveryId]);
    const delivery = await webhookDeliveries.findById(db, deliveryId);
    if (!delivery) throw new AppError('NOT_FOUND', `Delivery ${deliveryId} vanished (webhook deleted?)`);
    if (attempts.some((a) => a.attempt > after) || Date.now() >= deadline) return webhookDeliveries.toDeliveryModel(delivery, attempts);
    await sleep(POLL_MS);
  }
}
