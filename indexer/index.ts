/**
 * The indexer as a library: `startIndexer` runs every configured network on this thread (what
 * `npm start` and the tests call, and `npm run indexer` on the embedded PGlite store);
 * `startSharedIndexer` runs this process's share of the networks, each in a supervised worker
 * thread (what `npm run indexer` calls on PostgreSQL); `indexNetworkUpTo` indexes one network once,
 * under the writer lock the caller took (the CLI's backfill); `decodeRange` and `persistBatch` are the
 * two halves of a batch, exported so the API benchmark can load many ops through the same
 * persistence code.
 */
import { createDb, type Db } from '../shared/db/client.js';
import type { IndexerConfig, NetworkConfig } from '../shared/config.js';
import { findNetwork } from '../shared/networks.js';
import type { Logger } from '../shared/log.js';
import { newMemberId, startMembership, type Membership } from './membership.js';
import { runNetwork, type NetworkRunner } from './runNetwork.js';
import { NetworkSync } from './sync/networkSync.js';
import { startSupervisor, type Supervisor, type SupervisorOptions } from './supervisor.js';
import { sessionUrl } from '../shared/db/tables/indexerMembers.js';
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

/** The networks of NETWORKS this process may index: those with an RPC URL, and only INDEXER_NETWORKS' when it is set. */
export function indexableNetworks(config: Pick<IndexerConfig, 'networks' | 'INDEXER_NETWORKS'>, log: Logger): NetworkConfig[] {
  const pinned = config.INDEXER_NETWORKS?.split(',')
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => {
      const info = findNetwork(name);
      if (!info || !config.networks.some((n) => n.chainId === info.chainId))
        throw new Error(`INDEXER_NETWORKS: "${name}" is not one of NETWORKS (${config.networks.map((n) => n.name).join(', ')})`);
      return info.chainId;
    });
  return config.networks.filter((network) => {
    if (pinned && !pinned.includes(network.chainId)) return false;
    if (network.rpcUrls.length > 0) return true;
    log.warn({ network: network.name }, 'no RPC_URL for this network; not indexing it');
    return false;
  });
}

export type SharedIndexer = { memberId: string; membership: Membership; supervisor: Supervisor; stop(): Promise<void> };

/**
 * INDEXER_NETWORK_YOUNG_MB when unset, for a process that may index `networks` networks: for one or
 * two, a young generation of 16 MB (fewer collections: at 8 MB the devnet backfill's worker spent
 * 28 % of its profile collecting garbage, and 16 MB took 6 % of its CPU off with its process under
 * 300 MB of RSS, docs/performance-peer.md); for more, 8 MB, which keeps 21 networks' workers in
 * 921 MB of RSS.
 */
export function defaultYoungMb(networks: number): number {
  return networks <= 2 ? 16 : 8;
}

/**
 * This process's share of the networks on PostgreSQL: it joins the indexer processes of the
 * database (indexer/membership.ts) and runs each network the split gives it in a worker thread of
 * its own (indexer/supervisor.ts).
 */
export async function startSharedIndexer(deps: {
  databaseUrl: string;
  config: Pick<
    IndexerConfig,
    | 'networks'
    | 'INDEXER_NETWORKS'
    | 'INDEXER_NETWORK_HEAP_MB'
    | 'INDEXER_NETWORK_YOUNG_MB'
    | 'INDEXER_POLL_INTERVAL_MS'
    | 'INDEXER_TRACES'
    | 'INDEXER_TRANSFERS'
    | 'INDEXER_TRANSFER_LOOKBACK_BLOCKS'
    | 'INDEXER_DELEGATIONS'
    | 'LOG_LEVEL'
  > &
    Partial<Pick<IndexerConfig, 'LOG_FORMAT' | 'DB_STATEMENT_TIMEOUT_MS'>>;
  log: Logger;
  tuning?: Partial<IndexerTuning>;
  /** Tests shorten these. */
  heartbeatMs?: number;
  ttlMs?: number;
  supervision?: Pick<SupervisorOptions, 'hangMs' | 'restartDelayMs' | 'stopTimeoutMs'>;
}): Promise<SharedIndexer> {
  const { config, log } = deps;
  const memberId = newMemberId();
  // Every session of this process carries its member id: while one is open, the others know it is alive.
  const databaseUrl = sessionUrl(deps.databaseUrl, memberId);
  const statementTimeoutMs = config.DB_STATEMENT_TIMEOUT_MS || undefined;
  const db = await createDb({ databaseUrl, max: 1, statementTimeoutMs, log });
  const networks = indexableNetworks(config, log);
  const supervisor = startSupervisor({
    log,
    heapMb: config.INDEXER_NETWORK_HEAP_MB,
    youngMb: config.INDEXER_NETWORK_YOUNG_MB ?? defaultYoungMb(networks.length),
    ...deps.supervision,
    worker: {
      databaseUrl,
      statementTimeoutMs,
      settings: runSettingsOf(config, deps.tuning),
      log: { level: config.LOG_LEVEL, format: config.LOG_FORMAT },
    },
  });
  const membership = startMembership({
    db,
    log,
    memberId,
    networks,
    run: (networks) => supervisor.run(networks),
    heartbeatMs: deps.heartbeatMs,
    ttlMs: deps.ttlMs,
  });
  return {
    memberId,
    membership,
    supervisor,
    async stop() {
      await membership.stop();
      await supervisor.stop();
      await db.close();
    },
  };
}
