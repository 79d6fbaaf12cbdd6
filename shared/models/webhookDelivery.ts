import { z } from 'zod';
import { webhookSchema } from './webhook.js';

/**
 * Wire shapes of the webhook management endpoints beyond the spec's Webhook resource. Fields are
 * added beside the spec's, never in their place.
 */

/** A Webhook as listed: the spec's fields plus its delivery state. */
export const webhookWithStatusSchema = webhookSchema.extend({
  status: z.enum(['enabled', 'disabled']),
  /** gone: the receiver answered 410; failing: no success for five days. */
  disabledReason: z.string().nullable(),
});

export const webhookAttemptSchema = z.object({
  attempt: z.number().int(),
  startedAt: z.iso.datetime(),
  durationMs: z.number().int(),
  /** null when no response came back (timeout, connection refused, blocked address). */
  responseStatus: z.number().int().nullable(),
  error: z.string().nullable(),
});

export const webhookDeliverySchema = z.object({
  /** The `webhook-id` header and the body's `id`. */
  id: z.string(),
  webhookId: z.string(),
  eventType: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'cancelled']),
  attempts: z.number().int(),
  createdAt: z.iso.datetime(),
  nextAttemptAt: z.iso.datetime().nullable(),
  deliveredAt: z.iso.datetime().nullable(),
  attemptLog: z.array(webhookAttemptSchema),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
