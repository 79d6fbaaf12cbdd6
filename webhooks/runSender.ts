import { isDatabaseUnavailable } from '../shared/db/client.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import type { ClaimedDelivery } from '../shared/db/tables/webhookDeliveries.js';
import { dispatcherMetrics } from './metrics.js';
import { sendDelivery, type SendDeps } from './sendDelivery.js';
import type { Wakeup } from './wakeup.js';

export type SenderSettings = {
  /** Requests in flight at once (per dispatcher process). */
  concurrency: number;
  /** Requests in flight to one webhook at once (per process): a slow endpoint keeps the others' slots free. */
  perWebhook: number;
  /** How long a claim holds a delivery; past it, another dispatcher may send it again. */
  leaseMs: number;
  /** Longest sleep when nothing is due (retries falling due, missed notifications). */
  pollIntervalMs: number;
};

/** Claims fetched per query: large enough to amortise the round trip, small enough to share work. */
const MAX_CLAIM = 100;
const MIN_SLEEP_MS = 10;

/**
 * The sender loop: claim due deliveries (SKIP LOCKED, so dispatchers share the queue), send each
 * with bounded concurrency, sleep until the next one falls due or a NOTIFY / finished send wakes
 * it. Resolves once `isRunning()` turns false and every send in flight has been recorded.
 */
export async function runSender(deps: SendDeps & { wakeup: Wakeup; isRunning: () => boolean }, settings: SenderSettings): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  const perWebhook = new Map<string, number>();
  const start = (d: ClaimedDelivery) => {
    perWebhook.set(d.webhookId, (perWebhook.get(d.webhookId) ?? 0) + 1);
    const startedAt = performance.now();
    const task = sendDelivery(deps, d)
      .then((decision) => dispatcherMetrics.attempted(decision, (performance.now() - startedAt) / 1000))
      .catch((err: unknown) => deps.log.error({ err, deliveryId: d.id }, 'recording a delivery attempt failed'))
      .finally(() => {
        const left = perWebhook.get(d.webhookId)! - 1;
        if (left > 0) perWebhook.set(d.webhookId, left);
        else perWebhook.delete(d.webhookId);
        inFlight.delete(task);
        deps.wakeup.wake();
      });
    inFlight.add(task);
  };

  while (deps.isRunning()) {
    try {
      const room = Math.min(settings.concurrency - inFlight.size, MAX_CLAIM);
      const busy = [...perWebhook].filter(([, n]) => n >= settings.perWebhook).map(([id]) => id);
      if (room > 0) {
        const claimed = await webhookDeliveries.claimDue(deps.db, {
          limit: room,
          leaseMs: settings.leaseMs,
          perWebhook: settings.perWebhook,
          skipWebhooks: busy,
        });
        claimed.forEach(start);
        if (claimed.length === room) continue; // more may be due right now
      }
      // While some webhooks are at their cap, what is due may be theirs: a finished send wakes us.
      const idle = room > 0 && busy.length === 0;
      await deps.wakeup.wait(idle ? await msUntilNextDue(deps, settings.pollIntervalMs) : settings.pollIntervalMs);
    } catch (err) {
      // An outage is logged once by the database client.
      if (isDatabaseUnavailable(err)) deps.log.debug({ err }, 'claiming deliveries cut by a database outage; retrying');
      else deps.log.error({ err }, 'webhook sender loop failed; retrying');
      await deps.wakeup.wait(settings.pollIntervalMs);
    }
  }
  await Promise.all(inFlight);
}

async function msUntilNextDue(deps: SendDeps, pollIntervalMs: number): Promise<number> {
  const next = await webhookDeliveries.nextDueAt(deps.db);
  if (!next) return pollIntervalMs;
  // At least a few ms: a due row another dispatcher is claiming right now (or clock skew with the
  // database) must not turn this into a busy loop.
  return Math.max(MIN_SLEEP_MS, Math.min(pollIntervalMs, next.getTime() - Date.now()));
}
