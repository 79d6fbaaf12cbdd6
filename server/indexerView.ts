import type { NetworkConfig } from '../shared/config.js';
import type { Queryable } from '../shared/db/client.js';
import * as indexerState from '../shared/db/tables/indexerState.js';
import type { IndexerState } from '../shared/db/tables/indexerState.js';
import type { Logger } from '../shared/log.js';

/**
 * The web process's view of where the indexer stands on each served network: indexed block and
 * reorg epoch, read from `indexer_state` at most once per `maxAgeMs` (one query for all networks,
 * shared by concurrent callers). The cache uses it to tell final data from data a reorg may still
 * replace, and to drop entries written before a reorg.
 */
export type IndexerView = {
  /** State per chain id; a network the indexer has not started yet is absent. */
  current(): Promise<ReadonlyMap<number, IndexerState>>;
  /**
   * The state read again now (unless it was read in the last `minRefreshMs`): for a caller that
   * knows the database has moved past the remembered state (server/readReplicas.ts).
   */
  refresh(): Promise<ReadonlyMap<number, IndexerState>>;
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
  let loading: Promise<ReadonlyMap<number, IndexerState>> | null = null;

  async function refresh(): Promise<ReadonlyMap<number, IndexerState>> {
    try {
      const rows = await indexerState.listByChainIds(db, chainIds);
      states = new Map(rows.map((s) => [s.chainId, s]));
      loadedAt = Date.now();
    } catch (err) {
      // Keep answering with the last known state; the query that needs the database will fail on its own.
      options.log.warn({ err }, 'indexer_state read failed');
    }
    return states;
  }

  /** The state if read within `ageMs`, else one read shared by concurrent callers. */
  function readWithin(ageMs: number): Promise<ReadonlyMap<number, IndexerState>> {
    if (Date.now() - loadedAt < ageMs) return Promise.resolve(states);
    loading ??= refresh().finally(() => {
      loading = null;
    });
    return loading;
  }

  return {
    current: () => readWithin(maxAgeMs),
    refresh: () => readWithin(minRefreshMs),
  };
}
