import { z } from 'zod';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { AppError } from '../../shared/errors.js';
import { findNetworkByChainId } from '../../shared/networks.js';
import { serializeEnvelope } from '../../shared/webhookEnvelope.js';
import { newDeliveryId } from '../../shared/webhookIds.js';
import { webhookDeliverySchema } from '../../shared/models/webhookDelivery.js';
import { defineEndpoint } from './defineEndpoint.js';
import { waitForAttempt } from './deliveryOutcome.js';

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
    return { delivery: await waitForAttempt(ctx.db, deliveryId, 0), success: true as const };
  },
});
