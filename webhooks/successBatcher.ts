import { retryWhileUnavailable } from '../shared/db/availability.js';
import { transactionRetryingConflicts, type Db } from '../shared/db/client.js';
import * as webhookAttempts from '../shared/db/tables/webhookAttempts.js';
import type { AttemptRecord } from '../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../shared/db/tables/webhooks.js';
import { RECORD_RETRY_MS } from './sendDelivery.js';

/**
 * Records successful attempts in batches: one transaction (three statements) for up to
 * MAX_BATCH deliveries instead of one transaction each, which is what lets one dispatcher pass a
 * thousand deliveries a second. A batch waits at most MAX_DELAY_MS. Callers await their own
 * record, so a send counts as in flight until its outcome is durable.
 */
const MAX_BATCH = 200;
const MAX_DELAY_MS = 5;

export type SuccessBatcher = { record(attempt: AttemptRecord & { webhookId: string }): Promise<void> };

export function createSuccessBatcher(db: Db): SuccessBatcher {
  type Entry = { attempt: AttemptRecord & { webhookId: string }; done: () => void; fail: (e: unknown) => void };
  let queue: Entry[] = [];
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const attempts = batch.map((e) => e.attempt);
    const write = () =>
      transactionRetryingConflicts(db, async (tx) => {
        await webhookAttempts.insertMany(tx, attempts);
        await webhookDeliveries.settleDeliveredMany(
          tx,
          attempts.map((a) => ({ id: a.deliveryId, attempt: a.attempt })),
        );
        await webhooks.markSucceeded(
          tx,
          attempts.map((a) => a.webhookId),
        );
      });
    // Sent already: through a database outage the record waits for it rather than the receiver getting it twice.
    retryWhileUnavailable(write, { deadline: Date.now() + RECORD_RETRY_MS }).then(
      () => batch.forEach((e) => e.done()),
      (error: unknown) => batch.forEach((e) => e.fail(error)),
    );
  };

  return {
    record(attempt) {
      return new Promise<void>((done, fail) => {
        queue.push({ attempt, done, fail });
        if (queue.length >= MAX_BATCH) flush();
        else timer ??= setTimeout(flush, MAX_DELAY_MS);
      });
    },
  };
}
