/**
 * The indexer as a library: `startIndexer` runs every configured network on this thread (what
 * `npm start` and the tests call, and `npm run indexer` on the embedded PGlite store);
 * `startSharedIndexer` (indexer/sharedIndexer.ts) runs this process's share of the networks, each in
 * a supervised worker thread (what `npm run indexer` calls on PostgreSQL, importing it alone);
 * `indexNetworkUpTo` indexes one network once, under the writer lock the caller took (the CLI's
 * backfill); `decodeRange` and `persistBatch` are the two halves of a batch, exported so the API
 * benchmark can load many ops through the same persistence code.
 */
import type { Db } from '../shared/db/client.js';
import type { IndexerConfig, NetworkConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { runNetwork, type NetworkRunner } from './runNetwork.js';
import { NetworkSync } from './sync/networkSync.js';
import type { IndexerTuning } from './tuning.js';
import { runSettingsOf, type RunSettings, type RunSettingsConfig } from './runSettings.js';

export { decodeRange } from './decode/decodeRange.js';
export type { DecodedBatch, DecodedUserOp } from './decode/decodedBatch.js';
export { emptyBatch } from './decode/decodedBatch.js';
export type { RawRange } from './decode/chainTypes.js';
export { persistBatch, type PersistOptions } from './persist/persistBatch.js';
export { rollbackTo } from './persist/rollback.js';
export { DEFAULT_TUNING, type IndexerTuning } from './tuning.js';
export { runSettingsOf, type RunSettings, type RunSettingsConfig } from './runSettings.js';
export { defaultYoungMb, indexableNetworks, startSharedIndexer, type SharedIndexer } from './sharedIndexer.js';
export { takeWriterLock, type WriterLockWait } from './writerLock.js';

export type Indexer = {
  /** Catches every network up to its current head now (tests). */
  syncNow(): Promise<void>;
  stop(): Promise<void>;
};

export function startIndexer(deps: {
  db: Db;
  config: Pick<IndexerConfig, 'networks'> & RunSettingsConfig;
  log: Logger;
  tuning?: Partial<IndexerTuning>;
}): Indexer {
  const settings = runSettingsOf(deps.config, deps.tuning);
  const runners: NetworkRunner[] = [];
  for (const network of deps.config.networks) {
    if (network.rpcUrls.length === 0) {
      deps.log.warn({ network: network.name }, 'no RPC_URL for this network; not indexing it');
      continue;
    }
    runners.push(runNetwork({ db: deps.db, log: deps.log, network, settings }));
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

/**
 * Indexes `network` once, on this thread, from its cursor up to `untilBlock` (the head when absent),
 * as a pass of its runner would. The caller holds the network's writer lock (takeWriterLock), and
 * the cursor exists (the indexer created it): the CLI's backfill.
 */
export async function indexNetworkUpTo(deps: {
  db: Db;
  log: Logger;
  network: NetworkConfig;
  settings: RunSettings;
  untilBlock?: number;
}): Promise<void> {
  const { network } = deps;
  const sync = new NetworkSync(deps.db, network, deps.log.child({ network: network.name, chainId: network.chainId }), deps.settings);
  await sync.catchUp(() => false, deps.untilBlock);
}
