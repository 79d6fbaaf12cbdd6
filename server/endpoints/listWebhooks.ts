import { z } from 'zod';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { webhookWithStatusSchema } from '../../shared/models/webhookDelivery.js';
import { defineEndpoint } from './defineEndpoint.js';

export const listWebhooks = defineEndpoint({
  summary: "The calling API key's webhooks, oldest first (secrets are never listed).",
  tag: 'Webhook',
  capability: 'webhooks',
  // A caller reads back the webhooks and deliveries it just wrote: never from a replica behind.
  reads: 'primary',
  input: z.object({}),
  output: z.object({ webhooks: z.array(webhookWithStatusSchema) }),
  async handler(ctx) {
    const rows = await webhooks.listByKey(ctx.db, ctx.apiKey.id);
    return { webhooks: rows.map(webhooks.toWebhookModel) };
  },
});
