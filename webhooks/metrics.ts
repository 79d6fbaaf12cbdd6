/**
 * The dispatcher's Prometheus metrics (prom-client's default registry, served at /metrics):
 * deliveries by outcome and attempts as they happen in this process; the queue depth read from
 * `webhook_deliveries` at scrape time (shared by every dispatcher).
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Queryable } from '../shared/db/client.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import type { Decision } from './retryPolicy.js';

let watched: Queryable | null = null;

new Gauge({
  name: 'opscan_dispatcher_queue_depth',
  help: 'Pending webhook deliveries (state="due": due now; "waiting": a retry later).',
  labelNames: ['state'],
  async collect() {
    this.reset();
    if (!watched) return;
    try {
      const counts = await webhookDeliveries.countByStatus(watched);
      this.set({ state: 'due' }, counts.due);
      this.set({ state: 'waiting' }, counts.pending - counts.due);
    } catch {
      // The database is unreachable: no sample (readyz says why).
    }
  },
});

const deliveries = new Counter({
  name: 'opscan_dispatcher_deliveries_total',
  help: 'Delivery attempts by outcome: delivered, retry (scheduled again), give_up (failed for good), disable (webhook disabled).',
  labelNames: ['outcome'],
});
// Every outcome from the first scrape on, so a rate over it never starts from a missing series.
for (const outcome of ['delivered', 'retry', 'give_up', 'disable'] satisfies Array<Decision['kind']>) deliveries.inc({ outcome }, 0);
const attempts = new Counter({ name: 'opscan_dispatcher_attempts_total', help: 'Webhook POSTs sent (each attempt of each delivery).' });
const latency = new Histogram({
  name: 'opscan_dispatcher_delivery_seconds',
  help: 'Time from claiming a delivery to recording its attempt (the POST and its bookkeeping).',
  labelNames: ['outcome'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
});

export const dispatcherMetrics = {
  /** Reads the queue depth from `db` at each scrape. */
  watch(db: Queryable): void {
    watched = db;
  },
  attempted(decision: Decision, seconds: number): void {
    attempts.inc();
    deliveries.inc({ outcome: decision.kind });
    latency.observe({ outcome: decision.kind }, seconds);
  },
};
