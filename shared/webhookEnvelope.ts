/**
 * The body of every webhook request. `id` equals the `webhook-id` header and stays the same on every
 * retry and replay; `timestamp` is when the event happened (block time for chain events), while
 * the `webhook-timestamp` header is when the attempt was made.
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export type WebhookEventType = 'user_operation' | 'account_deployed' | 'reorg' | 'webhook.test';

export type WebhookEnvelope = {
  type: WebhookEventType;
  id: string;
  timestamp: string;
  chainId: number;
  network: string;
  webhookId: string;
  data: Record<string, unknown>;
};

/**
 * Serialises once, in a fixed key order. The result is stored and re-sent byte for byte: the
 * signature covers these exact bytes.
 */
export function serializeEnvelope(e: WebhookEnvelope): string {
  return JSON.stringify({
    type: e.type,
    id: e.id,
    timestamp: e.timestamp,
    chainId: e.chainId,
    network: e.network,
    webhookId: e.webhookId,
    data: e.data,
  });
}
