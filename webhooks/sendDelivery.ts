import type { Agent } from 'undici';
import { retryWhileUnavailable } from '../shared/db/availability.js';
import { transactionRetryingConflicts, type Db } from '../shared/db/client.js';
import * as webhookAttempts from '../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import type { ClaimedDelivery } from '../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../shared/db/tables/webhooks.js';
import type { Logger } from '../shared/log.js';
import { decryptSecret, type Keyring } from '../shared/webhookSecrets.js';
import { deliver } from './deliver.js';
import { decide, parseRetryAfter, type Decision } from './retryPolicy.js';
import { signatureHeaders } from './sign.js';
import type { SuccessBatcher } from './successBatcher.js';

export type SendSettings = {
  timeoutMs: number;
  /** Retry delays (RETRY_SCHEDULE_MS unless a test injects shorter ones). */
  schedule?: readonly number[];
  random?: () => number;
};

export type SendDeps = { db: Db; log: Logger; keyring: Keyring; agent: Agent; successes: SuccessBatcher; settings: SendSettings };

/**
 * How long the record of an attempt already sent is retried while the database is away. Past it the
 * record is dropped and the lease runs out, so the delivery is sent again (at-least-once); the
 * bound keeps a dispatcher stopping during an outage from waiting forever.
 */
export const RECORD_RETRY_MS = 30_000;

/**
 * One attempt of a claimed delivery: sign the stored bytes with this attempt's timestamp, POST,
 * then record the attempt and the next state in one transaction. A crash between the POST and the
 * record means the lease runs out and the same delivery (same webhook-id) is sent again:
 * at-least-once, by design. A database outage between the two only delays the record.
 */
export async function sendDelivery(deps: SendDeps, d: ClaimedDelivery): Promise<Decision> {
  const startedAt = new Date();
  let response;
  try {
    const secret = decryptSecret(deps.keyring, d.webhookId, d.secretCiphertext);
    const headers = signatureHeaders(secret, d.id, d.body, startedAt);
    response = await deliver({ url: d.url, body: d.body, headers, agent: deps.agent, timeoutMs: deps.settings.timeoutMs });
  } catch (error) {
    // Only a broken secret gets here (deliver never throws): retry, an operator can fix the key.
    response = { status: null, durationMs: 0, error: (error as Error).message, snippet: null, retryAfter: null };
  }
  const attempt = {
    deliveryId: d.id,
    attempt: d.attempt,
    startedAt,
    durationMs: response.durationMs,
    responseStatus: response.status,
    error: response.error,
    responseSnippet: response.snippet,
  };
  if (response.status !== null && response.status >= 200 && response.status < 300) {
    await deps.successes.record({ ...attempt, webhookId: d.webhookId });
    return { kind: 'delivered' };
  }

  const now = new Date();
  const record = () =>
    transactionRetryingConflicts(deps.db, async (tx) => {
      await webhookAttempts.insert(tx, attempt);
      const failingSince = await webhooks.markFailing(tx, d.webhookId);
      const decision = decide({
        result: { ok: false, status: response.status, retryAfterMs: parseRetryAfter(response.retryAfter, now) },
        attempt: d.attempt,
        now,
        failingSince,
        schedule: deps.settings.schedule,
        random: deps.settings.random,
      });
      switch (decision.kind) {
        case 'retry':
          await webhookDeliveries.settle(tx, { id: d.id, attempt: d.attempt, status: 'pending', nextAttemptAt: decision.at });
          break;
        case 'give_up':
          await webhookDeliveries.settle(tx, { id: d.id, attempt: d.attempt, status: 'failed' });
          deps.log.warn({ deliveryId: d.id, webhookId: d.webhookId, attempts: d.attempt }, 'delivery failed for good');
          break;
        case 'disable':
          await webhookDeliveries.settle(tx, { id: d.id, attempt: d.attempt, status: 'failed' });
          await webhooks.disable(tx, d.webhookId, decision.reason);
          await webhookDeliveries.cancelPendingOfWebhook(tx, d.webhookId);
          deps.log.warn({ webhookId: d.webhookId, reason: decision.reason }, 'webhook disabled');
          break;
        case 'delivered':
          break;
      }
      return decision;
    });
  return retryWhileUnavailable(record, { deadline: Date.now() + RECORD_RETRY_MS });
}
