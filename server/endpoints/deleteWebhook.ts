import { z } from 'zod';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { AppError } from '../../shared/errors.js';
import { defineEndpoint } from './defineEndpoint.js';

export const deleteWebhook = defineEndpoint({
  summary: 'Deletes one of your webhooks; its pending deliveries are dropped.',
  tag: 'Webhook',
  capability: 'webhooks',
  // A caller reads back the webhooks and deliveries it just wrote: never from a replica behind.
  reads: 'primary',
  methods: ['DELETE'],
  kind: 'mutation',
  input: z.object({ id: z.string().trim().min(1, 'is required').max(64) }),
  output: z.object({ success: z.literal(true) }),
  async handler(ctx, { id }) {
    // Another key's webhook answers exactly like a missing one: ids are not confirmed to strangers.
    if (!(await webhooks.deleteOwned(ctx.db, ctx.apiKey.id, id))) {
      throw new AppError('NOT_FOUND', `No webhook ${id}`, { param: 'id' });
    }
    return { success: true as const };
  },
});
