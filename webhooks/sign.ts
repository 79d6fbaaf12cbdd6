import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks headers for one attempt: `webhook-id` (the delivery id, the same on every
 * retry), `webhook-timestamp` (this attempt, unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>`).
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export function signatureHeaders(secret: string, deliveryId: string, body: string, at: Date): Record<string, string> {
  return {
    'webhook-id': deliveryId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(deliveryId, at, body),
  };
}
