import { z } from 'zod';
import * as webhookAttempts from '../../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { AppError } from '../../shared/errors.js';
import { webhookDeliverySchema } from '../../shared/models/webhookDelivery.js';
import { defineEndpoint } from './defineEndpoint.js';
import { waitForAttempt } from './deliveryOutcome.js';

export const replayWebhookDelivery = defineEndpoint({
  summary:
    'Sends a delivery again now (same webhook-id and body, new timestamp and signature) and answers the outcome of that attempt, as testWebhook does.',
  tag: 'Webhook',
  capability: 'webhooks',
  // A caller reads back the webhooks and deliveries it just wrote: never from a replica behind.
  reads: 'primary',
  methods: ['GET', 'POST'],
  kind: 'mutation',
  input: z.object({ id: z.string().trim().min(1, 'is required').max(64) }),
  output: z.object({ delivery: webhookDeliverySchema, success: z.literal(true) }),
  async handler(ctx, { id }) {
    const apiKeyId = ctx.apiKey.id;
    const delivery = await webhookDeliveries.findOwned(ctx.db, apiKeyId, id);
    if (!delivery) throw new AppError('NOT_FOUND', `No delivery ${id}`, { param: 'id' });
    const webhook = await webhooks.findOwned(ctx.db, apiKeyId, delivery.webhookId);
    if (webhook?.status !== 'enabled') {
      throw new AppError('CONFLICT', `Webhook ${delivery.webhookId} is disabled (${webhook?.disabledReason}); create it again`, {
        param: 'id',
      });
    }
    // The replay is the first attempt numbered above those logged so far.
    const logged = await webhookAttempts.listByDeliveries(ctx.db, [id]);
    const requeued = await webhookDeliveries.requeue(ctx.db, id);
    if (!requeued) throw new AppError('NOT_FOUND', `No delivery ${id}`, { param: 'id' });
    await webhookDeliveries.notifyDue(ctx.db);
    return { delivery: await waitForAttempt(ctx.db, id, Math.max(0, ...logged.map((a) => a.attempt))), success: true as const };
  },
});
