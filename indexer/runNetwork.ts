/**
 * The life of one network in an indexer process: become its only writer (a Postgres session
 * advisory lock, held on a dedicated session for as long as we index; PGlite is one process
 * anyway), create the cursor, catch up, then follow the head on the node-cron schedule. A lost
 * session or lock means we stop writing and queue for the lock again.
 */
import cron from 'node-cron';
import type { Db, Queryable } from '../shared/db/client.js';
import type { NetworkConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { NetworkSync } from './sync/networkSync.js';
import type { IndexerTuning, TraceMode } from './tuning.js';
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
  tuning: IndexerTuning;
}): NetworkRunner {
  const { db, network, tuning } = deps;
  const log = deps.log.child({ network: network.name, chainId: network.chainId });
  const sync = new NetworkSync(db, network, log, { ...tuning, traces: deps.traces });
  let stopped = false;
  let wake: () => void = () => undefined;
  const stopSignal = new Promise<void>((resolve) => (wake = resolve));
  let running: Promise<void> | null = null;
  let ready: Promise<void> | null = null;

  const acquireLock = async (session: Queryable): Promise<boolean> => {
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

  const whileLocked = async (session: Queryable): Promise<void> => {
    if (!(await acquireLock(session))) return;
    // The writer of a network gives it its own partitions before the first write (migration 0010).
    await ensureChainPartitions(db, network.chainId);
    await sync.init();
    let lost: (err: unknown) => void = () => undefined;
    const lostSignal = new Promise<never>((_, reject) => (lost = reject));
    lostSignal.catch(() => undefined);
    const tick = (): Promise<void> => {
      running ??= (async () => {
        try {
          await session.query('select 1'); // the session holding the lock is still alive
        } catch (err) {
          lost(err);
          return;
        }
        await sync.catchUp(() => stopped);
      })()
        .catch((err: unknown) => log.error({ err }, 'indexing pass failed; retrying on the next tick'))
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
    while (!stopped) {
      try {
        await db.withSession(whileLocked);
      } catch (err) {
        if (stopped) break;
        log.error({ err }, 'indexer session failed; retrying');
        await Promise.race([sleep(tuning.lockRetryMs), stopSignal]);
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
