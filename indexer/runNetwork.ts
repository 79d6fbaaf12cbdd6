/**
 * The life of one network in an indexer process: become its only writer (a Postgres session
 * advisory lock, held on a dedicated session for as long as we index; PGlite is one process
 * anyway), create the cursor, catch up, then follow the head on the node-cron schedule. A lost
 * session or lock means we stop writing and queue for the lock again: a restart or crash of the
 * database ends the session, so the runner waits for the database (with back-off, one log line per
 * outage) and takes the lock again. A batch cut by the outage was rolled back whole and is written
 * again from the committed cursor.
 */
import cron from 'node-cron';
import { backoffMs } from '../shared/db/availability.js';
import { isDatabaseUnavailable, type Db, type Session } from '../shared/db/client.js';
import type { NetworkConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { NetworkSync } from './sync/networkSync.js';
import type { IndexerTuning, TraceMode, TransferMode } from './tuning.js';
import { ensureChainPartitions } from '../shared/db/partitions.js';

export type NetworkRunner = {
  /** Runs one catch-up now (or waits for the one running) — tests use it to wait for the head. */
  syncNow(): Promise<void>;
  stop(): Promise<void>;
};

/** Advisory-lock key of a network's writer: a fixed prefix and the chain id. */
export const lockKey = (chainId: number): string => ((0x4337n << 32n) + BigInt(chainId)).toString();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function runNetwork(deps: {
  db: Db;
  log: Logger;
  network: NetworkConfig;
  pollCron: string;
  traces: TraceMode;
  transfers?: TransferMode;
  tuning: IndexerTuning;
}): NetworkRunner {
  const { db, network, tuning } = deps;
  const log = deps.log.child({ network: network.name, chainId: network.chainId });
  const sync = new NetworkSync(db, network, log, { ...tuning, traces: deps.traces, transfers: deps.transfers ?? 'known' });
  let stopped = false;
  let wake: () => void = () => undefined;
  const stopSignal = new Promise<void>((resolve) => (wake = resolve));
  let running: Promise<void> | null = null;
  let ready: Promise<void> | null = null;

  const acquireLock = async (session: Session): Promise<boolean> => {
    if (db.kind !== 'postgres') return true;
    for (let waited = false; !stopped; waited = true) {
      const { rows } = await session.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [
        lockKey(network.chainId),
      ]);
      if (rows[0]?.locked) return true;
      if (!waited) log.info('another process indexes this network; waiting for its lock');
      await Promise.race([sleep(tuning.lockRetryMs), stopSignal]);
    }
    return false;
  };

  const whileLocked = async (session: Session): Promise<void> => {
    if (!(await acquireLock(session))) return;
    // The writer of a network gives it its own partitions before the first write (migration 0010).
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
    const tick = (): Promise<void> => {
      running ??= sync
        .catchUp(shouldStop)
        .catch((err: unknown) => {
          // An outage is logged once by the database client; the pass runs again once it is over.
          if (isDatabaseUnavailable(err)) log.debug({ err }, 'indexing pass cut by a database outage');
          else log.error({ err }, 'indexing pass failed; retrying on the next tick');
        })
        .finally(() => (running = null));
      return running;
    };
    ready = Promise.resolve();
    const task = cron.schedule(deps.pollCron, () => void tick(), { noOverlap: true, name: `indexer-${network.name}` });
    void tick();
    try {
      await Promise.race([stopSignal, lostSignal]);
    } finally {
      void task.destroy();
      await running;
      ready = null;
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
      while (!ready && !stopped) await sleep(20);
      if (stopped) return;
      await running;
      running ??= sync.catchUp(() => stopped).finally(() => (running = null));
      await running;
    },
    async stop() {
      stopped = true;
      wake();
      await loop;
    },
  };
}
