/**
 * The indexer on PostgreSQL (`npm run indexer`): this process joins the indexer processes of the
 * database and runs its share of the networks, each in a supervised worker thread. This thread only
 * supervises: it never loads the decoding and persistence code the workers run (indexer/index.ts),
 * which would hold about 25 MB of this process's memory for nothing (an idle process: 73 MB of RSS, 98 MB with it).
 */
import { createDb } from '../shared/db/client.js';
import type { IndexerConfig, NetworkConfig } from '../shared/config.js';
import { findNetwork } from '../shared/networks.js';
import type { Logger } from '../shared/log.js';
import { sessionUrl } from '../shared/db/tables/indexerMembers.js';
import { newMemberId, startMembership, type Membership } from './membership.js';
import { runSettingsOf } from './runSettings.js';
import { startSupervisor, type Supervisor, type SupervisorOptions } from './supervisor.js';
import type { IndexerTuning } from './tuning.js';

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
