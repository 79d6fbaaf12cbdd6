import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Queryable } from '../../shared/db/client.js';
import * as webhookAttempts from '../../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { AppError } from '../../shared/errors.js';
import { findNetworkByChainId } from '../../shared/networks.js';
import { serializeEnvelope } from '../../shared/webhookEnvelope.js';
import { newDeliveryId } from '../../shared/webhookIds.js';
import { webhookDeliverySchema, type WebhookDelivery } from '../../shared/models/webhookDelivery.js';
import { defineEndpoint } from './defineEndpoint.js';

/** How long the call waits for the dispatcher's first attempt (a send times out after 15 s). */
const WAIT_FOR_ATTEMPT_MS = 20_000;
const POLL_MS = 50;

export const testWebhook = defineEndpoint({
  summary: 'Sends a signed webhook.test event to the webhook and answers the outcome of the first attempt.',
  tag: 'Webhook',
  capability: 'webhooks',
  // A caller reads back the webhooks and deliveries it just wrote: never from a replica behind.
  reads: 'primary',
  methods: ['GET', 'POST'],
  kind: 'mutation',
  input: z.object({ id: z.string().trim().min(1, 'is required').max(64) }),
  output: z.object({ delivery: webhookDeliverySchema, success: z.literal(true) }),
  async handler(ctx, { id }) {
    const webhook = await webhooks.findOwned(ctx.db, ctx.apiKey.id, id);
    if (!webhook) throw new AppError('NOT_FOUND', `No webhook ${id}`, { param: 'id' });
    if (webhook.status !== 'enabled') {
      throw new AppError('CONFLICT', `Webhook ${id} is disabled (${webhook.disabledReason}); create it again`, { param: 'id' });
    }
    const deliveryId = newDeliveryId();
    const body = serializeEnvelope({
      type: 'webhook.test',
      id: deliveryId,
      timestamp: new Date().toISOString(),
      chainId: webhook.chainId,
      network: findNetworkByChainId(webhook.chainId)?.name ?? String(webhook.chainId),
      webhookId: id,
      data: { message: 'A test event from opscan: your endpoint is reachable and can verify signatures.' },
    });
    await webhookDeliveries.insertMany(ctx.db, [
      {
        id: deliveryId,
        webhookId: id,
        eventKey: `test:${deliveryId}`,
        eventType: 'webhook.test',
        chainId: webhook.chainId,
        userOpHash: null,
        body,
      },
    ]);
    await webhookDeliveries.notifyDue(ctx.db);
    return { delivery: await waitForFirstAttempt(ctx.db, deliveryId), success: true as const };
  },
});

/** The delivery once a dispatcher logged its first attempt, or as it stands when the wait ends. */
async function waitForFirstAttempt(db: Queryable, deliveryId: string): Promise<WebhookDelivery> {
  const deadline = Date.now() + WAIT_FOR_ATTEMPT_MS;
  for (;;) {
    const delivery = await webhookDeliveries.findById(db, deliveryId);
    if (!delivery) throw new AppError('NOT_FOUND', `Delivery ${deliveryId} vanished (webhook deleted?)`);
    const attempts = await webhookAttempts.listByDeliveries(db, [deliveryId]);
    if (attempts.length > 0 || Date.now() >= deadline) return webhookDeliveries.toDeliveryModel(delivery, attempts);
    await sleep(POLL_MS);
  }
}
