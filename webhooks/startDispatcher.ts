import type { DispatcherConfig } from '../shared/config.js';
import { isDatabaseUnavailable, type Db } from '../shared/db/client.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import * as cursors from '../shared/db/tables/webhookOutboxCursors.js';
import type { Logger } from '../shared/log.js';
import { keyringFor } from '../shared/webhookKeyring.js';
import { OUTBOX_CHANNEL } from '../shared/outboxEvents.js';
import type { ResolveHost } from '../shared/webhookUrls.js';
import { fanOutChain, type ChainToMatch } from './fanOut.js';
import { createGuardedAgent } from './guardedAgent.js';
import { pruneDeliveries, pruneOutbox, PRUNE_INTERVAL_MS } from './pruneDeliveries.js';
import { runSender } from './runSender.js';
import { createSuccessBatcher } from './successBatcher.js';
import { Wakeup } from './wakeup.js';

export const DELIVERY_TIMEOUT_MS = 15_000;
const LEASE_MS = 60_000;
const POLL_INTERVAL_MS = 1000;
const MATCH_BATCH_SIZE = 100;

/** What the dispatcher reads from configuration (the web config of `npm start` has it too). */
export type DispatcherSettings = Pick<DispatcherConfig, 'WEBHOOK_ALLOW_PRIVATE_URLS' | 'WEBHOOK_SECRET_KEY' | 'networks'> &
  Partial<Pick<DispatcherConfig, 'WEBHOOK_CONCURRENCY' | 'OUTBOX_RETENTION_HOURS'>>;

/** Knobs tests turn (short delays, a fake resolver); production uses the defaults. */
export type DispatcherOptions = {
  pollIntervalMs?: number;
  leaseMs?: number;
  timeoutMs?: number;
  concurrency?: number;
  /** Requests in flight to one webhook (default: a quarter of `concurrency`). */
  perWebhook?: number;
  batchSize?: number;
  retrySchedule?: readonly number[];
  random?: () => number;
  resolve?: ResolveHost;
};

/** Counters since this dispatcher started (several dispatchers each count their own work). */
export type DispatcherStats = {
  /** Outbox events matched (their cursor moved past them). */
  eventsMatched: number;
  deliveriesCreated: number;
  /** Outbox events that could not be processed, set aside in outbox_dead_letters. */
  deadLettered: number;
};

export type Dispatcher = { stats(): DispatcherStats; stop(): Promise<void> };

/**
 * Starts the two loops of the dispatcher: the matcher (outbox → deliveries, woken by
 * NOTIFY on OUTBOX_CHANNEL) and the sender (deliveries → signed POSTs). `stop()` stops taking work,
 * waits for sends in flight (at most the request timeout) and releases everything. Both loops ride
 * out a database outage: they retry on their poll interval, their LISTENs reconnect by themselves.
 */
export async function startDispatcher(deps: {
  db: Db;
  config: DispatcherSettings;
  log: Logger;
  options?: DispatcherOptions;
}): Promise<Dispatcher> {
  const { db, config, options = {} } = deps;
  const log = deps.log.child({ module: 'dispatcher' });
  const pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const concurrency = options.concurrency ?? config.WEBHOOK_CONCURRENCY ?? 64;
  const chains: ChainToMatch[] = config.networks.map((n) => ({ chainId: n.chainId, network: n.name, finalityDepth: n.finalityDepth }));
  for (const chain of chains) await cursors.ensure(db, chain.chainId);

  if (config.WEBHOOK_ALLOW_PRIVATE_URLS) {
    log.warn('WEBHOOK_ALLOW_PRIVATE_URLS=true: webhooks may reach private and loopback addresses (development only)');
  }
  const keyring = await keyringFor(db, config.WEBHOOK_SECRET_KEY);
  const agent = createGuardedAgent({
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    resolve: options.resolve,
    responseTimeoutMs: timeoutMs,
  });
  const matcherWakeup = new Wakeup();
  const senderWakeup = new Wakeup();
  let running = true;
  const isRunning = () => running;
  const stats: DispatcherStats = { eventsMatched: 0, deliveriesCreated: 0, deadLettered: 0 };

  const unlisten = [
    await db.listen(OUTBOX_CHANNEL, () => matcherWakeup.wake()),
    await db.listen(webhookDeliveries.DUE_CHANNEL, () => senderWakeup.wake()),
  ];

  const matcher = (async () => {
    while (running) {
      let more = false;
      for (const chain of chains) {
        try {
          const result = await fanOutChain({ db, log }, chain, options.batchSize ?? MATCH_BATCH_SIZE);
          stats.eventsMatched += result.events;
          stats.deliveriesCreated += result.deliveries;
          for (const letter of result.deadLetters) {
            stats.deadLettered++;
            log.error(
              { chainId: chain.chainId, outboxEventId: letter.outboxEventId, reason: letter.reason, deadLettered: stats.deadLettered },
              'outbox event cannot be processed: moved to outbox_dead_letters',
            );
          }
          if (result.deliveries > 0) senderWakeup.wake();
          more ||= result.more;
        } catch (err) {
          // The batch rolled back whole; an outage is logged once by the database client.
          if (isDatabaseUnavailable(err)) log.debug({ err, chainId: chain.chainId }, 'matching cut by a database outage; retrying');
          else log.error({ err, chainId: chain.chainId }, 'matching outbox events failed; retrying');
        }
      }
      if (!more) await matcherWakeup.wait(pollIntervalMs);
    }
  })();

  const sender = runSender(
    {
      db,
      log,
      keyring,
      agent,
      successes: createSuccessBatcher(db),
      wakeup: senderWakeup,
      isRunning,
      settings: { timeoutMs, schedule: options.retrySchedule, random: options.random },
    },
    {
      concurrency,
      perWebhook: options.perWebhook ?? Math.max(1, Math.floor(concurrency / 4)),
      leaseMs: options.leaseMs ?? LEASE_MS,
      pollIntervalMs,
    },
  );
  const prune = () => {
    void pruneDeliveries(db, log).catch((err: unknown) => log.error({ err }, 'pruning webhook deliveries failed'));
    void pruneOutbox(db, log, new Date(), config.OUTBOX_RETENTION_HOURS).catch((err: unknown) =>
      log.error({ err }, 'pruning matched outbox events failed'),
    );
  };
  const pruneTimer = setInterval(prune, PRUNE_INTERVAL_MS);
  pruneTimer.unref();
  log.info({ chains: chains.map((c) => c.chainId) }, 'webhook dispatcher started');

  let stopping: Promise<void> | undefined;
  return {
    stats: () => ({ ...stats }),
    stop() {
      stopping ??= (async () => {
        running = false;
        clearInterval(pruneTimer);
        matcherWakeup.wake();
        senderWakeup.wake();
        await Promise.all([matcher, sender]);
        for (const off of unlisten) await off().catch(() => {});
        await agent.close();
        log.info('webhook dispatcher stopped');
      })();
      return stopping;
    },
  };
}
