/**
 * The life of one network in an indexer process: become its only writer (its writer lock,
 * indexer/writerLock.ts, held on a dedicated session for as long as it indexes), create the cursor, catch up, then follow the head: as the node announces it (newHeads
 * over a WebSocket, when the network has one) and by polling every INDEXER_POLL_INTERVAL_MS after
 * the last pass (the fallback, and the catch for announcements lost). Passes never overlap: a head
 * announced during one asks for one more right after it, however many arrive. A lost
 * session or lock means we stop writing and queue for the lock again: a restart or crash of the
 * database ends the session, so the runner waits for the database (with back-off, one log line per
 * outage) and takes the lock again. A batch cut by the outage was rolled back whole and is written
 * again from the committed cursor.
 */
import { backoffMs } from '../shared/db/availability.js';
import { isDatabaseUnavailable, type Db, type Session } from '../shared/db/client.js';
import type { NetworkConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { indexerMetrics, type HeadSource } from './metrics.js';
import { subscribeNewHeads, type AnnouncedHead, type HeadSubscription } from './sync/headSubscription.js';
import { NetworkSync } from './sync/networkSync.js';
import type { RunSettings } from './runSettings.js';
import { ensureChainPartitions } from '../shared/db/partitions.js';
import { takeWriterLock } from './writerLock.js';

export type NetworkRunner = {
  /** Runs one catch-up pass that starts after this call (rejects if it fails) — tests use it to wait for the head. */
  syncNow(): Promise<void>;
  stop(): Promise<void>;
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function runNetwork(deps: { db: Db; log: Logger; network: NetworkConfig; settings: RunSettings }): NetworkRunner {
  const { db, network, settings } = deps;
  const { tuning } = settings;
  const log = deps.log.child({ network: network.name, chainId: network.chainId });
  const sync = new NetworkSync(db, network, log, settings);
  let stopped = false;
  let wake: () => void = () => undefined;
  const stopSignal = new Promise<void>((resolve) => (wake = resolve));
  /** Asks for a pass (set while this process holds the lock). */
  let requestPass: ((source: HeadSource) => Promise<void>) | null = null;

  const whileLocked = async (session: Session): Promise<void> => {
    const locked = await takeWriterLock(db, session, network.chainId, {
      retryMs: tuning.lockRetryMs,
      onHeld: () => log.info('another process indexes this network; waiting for its lock'),
      stop: { requested: () => stopped, signal: stopSignal },
    });
    if (!locked) return;
    // The writer of a network gives it its own partitions before the first write.
    await ensureChainPartitions(db, network.chainId);
    await sync.init();
    // The lock went with its session: stop writing at once (the next batch is not started; one
    // in flight cannot commit over another writer's, as persistBatch checks the cursor).
    let sessionLost = false;
    const lostSignal = session.lost.then((err) => {
      sessionLost = true;
      throw err;
    });
    lostSignal.catch(() => undefined);
    const shouldStop = () => stopped || sessionLost;

    // One pass at a time; requests made while one runs are served by ONE pass after it (each
    // request's promise settles with the first pass that starts after it).
    let requested: HeadSource | null = null;
    /** The latest head announced since the last pass started: it spares that pass two calls to the node. */
    let announced: AnnouncedHead | undefined;
    let waiting: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
    let running = null as Promise<void> | null;
    let pollTimer: NodeJS.Timeout | undefined;
    const armPoll = (): void => {
      clearTimeout(pollTimer);
      if (!shouldStop()) pollTimer = setTimeout(() => void request('poll').catch(() => undefined), settings.pollIntervalMs);
    };
    const drain = async (): Promise<void> => {
      while (requested !== null) {
        const source = requested;
        const served = waiting;
        const head = announced;
        requested = null;
        announced = undefined;
        waiting = [];
        clearTimeout(pollTimer);
        try {
          if (!shouldStop() && (await sync.catchUp(shouldStop, Infinity, head)) && source === 'poll')
            indexerMetrics.headFound(network.name, 'poll');
          for (const w of served) w.resolve();
        } catch (err) {
          // An outage is logged once by the database client; the pass runs again once it is over.
          if (stopped) log.debug({ err }, 'indexing pass ended by the stop');
          else if (isDatabaseUnavailable(err)) log.debug({ err }, 'indexing pass cut by a database outage');
          else log.error({ err }, 'indexing pass failed; retrying on the next poll or head');
          for (const w of served) w.reject(err);
        }
      }
    };
    const request = (source: HeadSource): Promise<void> => {
      const done = new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
      // A pass asked for by an announcement counts as the subscription's, whatever else asked.
      requested = requested === 'subscription' ? requested : source;
      running ??= drain().finally(() => {
        running = null;
        armPoll();
      });
      return done;
    };
    requestPass = request;
    let subscription: HeadSubscription | null = null;
    if (network.wsUrl) {
      subscription = subscribeNewHeads({
        url: network.wsUrl,
        log,
        keepAliveMs: tuning.wsKeepAliveMs,
        onHead: (head) => {
          if (head !== null) {
            indexerMetrics.headFound(network.name, 'subscription');
            announced = head;
          }
          void request(head === null ? 'poll' : 'subscription').catch(() => undefined);
        },
      });
    }
    void request('poll').catch(() => undefined);
    try {
      await Promise.race([stopSignal, lostSignal]);
    } finally {
      requestPass = null;
      await subscription?.stop();
      clearTimeout(pollTimer);
      // The pass running now re-arms no poll: shouldStop() holds by then (armPoll checks it).
      await running;
    }
  };

  const loop = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await db.withSession(whileLocked);
        attempt = -1;
      } catch (err) {
        if (stopped) break;
        // The database is away (restarting, crashed): try again soon, backing off; else as a standby would.
        if (isDatabaseUnavailable(err)) {
          log.debug({ err }, 'writer session lost to a database outage; taking the lock again once it is back');
          await Promise.race([sleep(backoffMs(attempt, tuning.lockRetryMs)), stopSignal]);
        } else {
          log.error({ err }, 'indexer session failed; retrying');
          await Promise.race([sleep(tuning.lockRetryMs), stopSignal]);
        }
      }
    }
  })();

  return {
    async syncNow() {
      while (!requestPass && !stopped) await sleep(20);
      if (requestPass) await requestPass('poll');
    },
    async stop() {
      stopped = true;
      // A pass's RPC retries end at once: a node that went away first (Ctrl-C stops the demo chain
      // with the indexer) would hold the stop for the whole retry schedule (~16 s).
      sync.stop();
      wake();
      await loop;
    },
  };
}
