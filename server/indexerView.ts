import type { NetworkConfig } from '../shared/config.js';
import { withinDeadline, type Queryable } from '../shared/db/client.js';
import * as indexerState from '../shared/db/tables/indexerState.js';
import type { IndexerState } from '../shared/db/tables/indexerState.js';
import type { Logger } from '../shared/log.js';

/**
 * The web process's view of where the indexer stands on each served network: indexed block and
 * reorg epoch, read from `indexer_state` at most once per `maxAgeMs` (one query for all networks,
 * shared by concurrent callers), and again at the next request once the indexer announces a move
 * (`invalidate`, on its NOTIFY: see server/services.ts). The cache uses it to tell final data from
 * data a reorg may still replace, to drop entries written before a reorg, and to stop serving
 * answers computed at an older head. A caller waits for the read no longer than the deadline of its
 * own work (a request's: the read may be another request's): past it, it goes on with the last known
 * state, as when the read fails.
 */
export type IndexerView = {
  /** State per chain id; a network the indexer has not started yet is absent. */
  current(): Promise<ReadonlyMap<number, IndexerState>>;
  /**
   * The state read again now (unless it was read in the last `minRefreshMs`): for a caller that
   * knows the database has moved past the remembered state (server/readReplicas.ts).
   */
  refresh(): Promise<ReadonlyMap<number, IndexerState>>;
  /** The indexer moved (its NOTIFY): the next caller reads the state again. */
  invalidate(): void;
};

export function createIndexerView(
  db: Queryable,
  networks: readonly NetworkConfig[],
  options: { log: Logger; maxAgeMs?: number; minRefreshMs?: number },
): IndexerView {
  const maxAgeMs = options.maxAgeMs ?? 1000;
  const minRefreshMs = Math.min(maxAgeMs, options.minRefreshMs ?? 100);
  const chainIds = networks.map((n) => n.chainId);
  let states: ReadonlyMap<number, IndexerState> = new Map();
  let loadedAt = -Infinity;
  /** Bumped by invalidate(): a read started before the indexer's last move is not shared after it. */
  let generation = 0;
  let appliedGeneration = -1;
  let loading: { generation: number; states: Promise<ReadonlyMap<number, IndexerState>> } | null = null;

  async function refresh(readGeneration: number): Promise<ReadonlyMap<number, IndexerState>> {
    try {
      const rows = await indexerState.listByChainIds(db, chainIds);
      // Reads overlap only across an invalidation: the later one wins.
      if (readGeneration >= appliedGeneration) {
        states = new Map(rows.map((s) => [s.chainId, s]));
        appliedGeneration = readGeneration;
        if (readGeneration === generation) loadedAt = Date.now();
      }
    } catch (err) {
      // Keep answering with the last known state; the query that needs the database will fail on its own.
      options.log.warn({ err }, 'indexer_state read failed');
    }
    return states;
  }

  /** The read under way since the indexer's last move, else a new one: one read shared by concurrent callers. */
  function sharedRead(): Promise<ReadonlyMap<number, IndexerState>> {
    if (loading?.generation === generation) return loading.states;
    const current = { generation, states: refresh(generation) };
    loading = current;
    void current.states.finally(() => {
      if (loading === current) loading = null;
    });
    return current.states;
  }

  /** The state if read within `ageMs`, else the shared read's, or the last known one at the caller's deadline. */
  function readWithin(ageMs: number): Promise<ReadonlyMap<number, IndexerState>> {
    if (Date.now() - loadedAt < ageMs) return Promise.resolve(states);
    // A read never fails (refresh keeps the last state): only the deadline ends the wait early.
    return withinDeadline(sharedRead()).catch(() => states);
  }

  return {
    current: () => readWithin(maxAgeMs),
    refresh: () => readWithin(minRefreshMs),
    invalidate() {
      generation++;
      loadedAt = -Infinity;
    },
  };
}
