/**
 * Knobs of the indexer with their defaults. Production runs on the defaults; tests pass overrides
 * to startIndexer (short timeouts against a fault proxy, small ranges). What production may choose
 * (INDEXER_TRACES) is configuration, not a knob here.
 */
/** INDEXER_TRACES: when the indexer calls debug_traceTransaction (see shared/config.ts). */
export type TraceMode = 'all' | 'needed' | 'off';

/** INDEXER_TRANSFERS: which token transfers the indexer stores (see shared/config.ts). */
export type TransferMode = 'ops' | 'known';

/** INDEXER_DELEGATIONS: whose EIP-7702 authorizations the indexer stores (see shared/config.ts). */
export type DelegationMode = 'ops' | 'all';

export type IndexerTuning = {
  /** Per HTTP request to the node. */
  rpcTimeoutMs: number;
  /** Calls per JSON-RPC batch (halves when a provider refuses a batch). */
  rpcBatchSize: number;
  /** JSON-RPC batches in flight per network. */
  rpcConcurrency: number;
  rpcRetries: number;
  rpcMinRetryDelayMs: number;
  rpcMaxRetryDelayMs: number;
  /**
   * How often the URLs ahead of the one in use (the list's order is the operator's preference) are
   * asked again, and how long a URL serving another chain is left out before it is asked again.
   */
  rpcEndpointRecheckMs: number;
  /** eth_getLogs block range to start with; it adapts to the provider (indexer/sync/fetchLogs.ts). */
  initialLogRange: number;
  maxLogRange: number;
  /** EntryPoint logs per range the range size aims at (bounds batch size and memory). */
  targetLogsPerRange: number;
  /** Ranges fetched ahead of the one being written, at least (the depth grows to hide latency: PrefetchDepth). */
  prefetchRanges: number;
  /** Ranges fetched ahead at most, however far the provider is. */
  maxPrefetchRanges: number;
  /** Raw logs (EntryPoint and token logs) the ranges fetched ahead may hold together: bounds their memory. */
  prefetchLogsInFlight: number;
  /** Batches written at once: the next one's base rows go in while the previous one commits. */
  concurrentWrites: number;
  /** How often the repair pass retries the ops left trace_needed (a node that could not trace). */
  traceRepairIntervalMs: number;
  /** Bundle transactions traced and re-decoded per repair transaction. */
  traceRepairBatch: number;
  /** Headers kept beyond the finality depth for reorg detection. */
  reorgMarginBlocks: number;
  /** How often a standby process retries the network's writer lock. */
  lockRetryMs: number;
  /**
   * INDEXER_TRANSFERS=known: newly known addresses whose earlier token logs one backfill
   * eth_getLogs asks for (in its topic filter; providers cap how many one filter may hold).
   */
  transferBackfillAddresses: number;
  /**
   * How long one pass at the head may spend on the transfer backfill before following the head
   * again (the rest waits for the next pass): a burst of new addresses never holds the head back.
   */
  transferBackfillSliceMs: number;
  /**
   * INDEXER_TRANSFERS=known: the known-address filter is stored (known_address_filters) between
   * passes once this many addresses were added since it last was; a start reads at most about as
   * many from the table besides it.
   */
  knownFilterSaveAddresses: number;
  /** Accounts whose implementation one naming slice reads (1–4 JSON-RPC calls each, in batched rounds). */
  accountNamingBatch: number;
  /**
   * How long one pass at the head may spend naming new accounts' implementations before following
   * the head again (the rest waits for the next pass).
   */
  accountNamingSliceMs: number;
  /**
   * The newHeads socket is asked for a call answer this often; a socket that has said nothing
   * since the last ask is taken for dead (a connection a NAT or load balancer dropped without
   * closing it) and opened again.
   */
  wsKeepAliveMs: number;
};

export const DEFAULT_TUNING: IndexerTuning = {
  rpcTimeoutMs: 30_000,
  rpcBatchSize: 100,
  rpcConcurrency: 4,
  rpcRetries: 8,
  rpcMinRetryDelayMs: 100,
  rpcMaxRetryDelayMs: 5_000,
  rpcEndpointRecheckMs: 30_000,
  initialLogRange: 100,
  maxLogRange: 10_000,
  targetLogsPerRange: 1_000,
  prefetchRanges: 3,
  maxPrefetchRanges: 32,
  prefetchLogsInFlight: 60_000,
  concurrentWrites: 2,
  traceRepairIntervalMs: 10 * 60_000,
  traceRepairBatch: 50,
  reorgMarginBlocks: 64,
  wsKeepAliveMs: 15_000,
  lockRetryMs: 5_000,
  transferBackfillAddresses: 100,
  transferBackfillSliceMs: 500,
  knownFilterSaveAddresses: 50_000,
  accountNamingBatch: 50,
  accountNamingSliceMs: 500,
};
