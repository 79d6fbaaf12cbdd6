/**
 * The indexer as a library: `startIndexer` runs every configured network in this process (what
 * `npm run indexer` and `npm start` call); `decodeRange` and `persistBatch` are the two halves of
 * a batch, exported so the API benchmark can load many ops through the same persistence code.
 */
import { DEFAULT_TRANSFER_LOOKBACK_BLOCKS } from '../shared/config.js';
import type { Db } from '../shared/db/client.js';
import type { IndexerConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { runNetwork, type NetworkRunner } from './runNetwork.js';
import { DEFAULT_TUNING, type IndexerTuning } from './tuning.js';

export { decodeRange } from './decode/decodeRange.js';
export type { DecodedBatch, DecodedUserOp } from './decode/decodedBatch.js';
export { emptyBatch } from './decode/decodedBatch.js';
export type { RawRange } from './decode/chainTypes.js';
export { persistBatch, type PersistOptions } from './persist/persistBatch.js';
export { rollbackTo } from './persist/rollback.js';
export { DEFAULT_TUNING, type IndexerTuning } from './tuning.js';

export type Indexer = {
  /** Catches every network up to its current head now (tests). */
  syncNow(): Promise<void>;
  stop(): Promise<void>;
};

export function startIndexer(deps: {
  db: Db;
  config: Pick<IndexerConfig, 'networks' | 'INDEXER_POLL_INTERVAL_MS' | 'INDEXER_TRACES'> &
    Partial<Pick<IndexerConfig, 'INDEXER_TRANSFERS' | 'INDEXER_TRANSFER_LOOKBACK_BLOCKS'>>;
  log: Logger;
  tuning?: Partial<IndexerTuning>;
}): Indexer {
  const tuning = { ...DEFAULT_TUNING, ...deps.tuning };
  const runners: NetworkRunner[] = [];
  for (const network of deps.config.networks) {
    if (network.rpcUrls.length === 0) {
      deps.log.warn({ network: network.name }, 'no RPC_URL for this network; not indexing it');
      continue;
    }
    runners.push(
      runNetwork({
        db: deps.db,
        log: deps.log,
        network,
        pollIntervalMs: deps.config.INDEXER_POLL_INTERVAL_MS,
        traces: deps.config.INDEXER_TRACES,
        transfers: deps.config.INDEXER_TRANSFERS ?? 'known',
        transferLookbackBlocks: deps.config.INDEXER_TRANSFER_LOOKBACK_BLOCKS ?? DEFAULT_TRANSFER_LOOKBACK_BLOCKS,
        tuning,
      }),
    );
  }
  return {
    async syncNow() {
      await Promise.all(runners.map((r) => r.syncNow()));
    },
    async stop() {
      await Promise.all(runners.map((r) => r.stop()));
    },
  };
}
