import { z } from 'zod';
import * as webhookAttempts from '../../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { AppError } from '../../shared/errors.js';
import { DELIVERY_ID } from '../../shared/webhookIds.js';
import { webhookDeliverySchema } from '../../shared/models/webhookDelivery.js';
import { defineEndpoint } from './defineEndpoint.js';

export const getWebhookDeliveries = defineEndpoint({
  summary: "A webhook's deliveries, newest first, each with its attempts (status codes, times, errors).",
  tag: 'Webhook',
  capability: 'webhooks',
  // A caller reads back the webhooks and deliveries it just wrote: never from a replica behind.
  reads: 'primary',
  input: z.object({
    id: z.string().trim().min(1, 'is required').max(64),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    /** nextCursor of the previous page. */
    cursor: z.string().regex(DELIVERY_ID, 'must be the nextCursor of a previous page').optional(),
  }),
  output: z.object({ deliveries: z.array(webhookDeliverySchema), nextCursor: z.string().nullable() }),
  async handler(ctx, { id, limit, cursor }) {
    const webhook = await webhooks.findOwned(ctx.db, ctx.apiKey.id, id);
    if (!webhook) throw new AppError('NOT_FOUND', `No webhook ${id}`, { param: 'id' });
    const page = await webhookDeliveries.listByWebhook(ctx.db, id, { limit: limit + 1, before: cursor });
    const shown = page.slice(0, limit);
    const attempts = await webhookAttempts.listByDeliveries(
      ctx.db,
      shown.map((d) => d.id),
    );
    return {
      deliveries: shown.map((d) => webhookDeliveries.toDeliveryModel(d, attempts)),
      nextCursor: page.length > limit ? shown[shown.length - 1]!.id : null,
    };
  },
});
