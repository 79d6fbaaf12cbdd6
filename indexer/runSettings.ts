/**
 * A network's run settings: how often its head is polled (INDEXER_POLL_INTERVAL_MS), when the
 * indexer traces (INDEXER_TRACES), which token transfers it stores (INDEXER_TRANSFERS), how far
 * before an address is first seen its transfers are read (INDEXER_TRANSFER_LOOKBACK_BLOCKS), whose
 * EIP-7702 authorizations it stores (INDEXER_DELEGATIONS), and the
 * tuning knobs. `runSettingsOf` builds them once from the configuration, a setting left out taking
 * the configuration schema's own default (shared/config.ts), and every runner of a network takes
 * them whole: the indexer on this thread, a network's worker thread, the CLI's backfill.
 */
import { indexerEnvSchema, type IndexerConfig } from '../shared/config.js';
import { DEFAULT_TUNING, type DelegationMode, type IndexerTuning, type TraceMode, type TransferMode } from './tuning.js';

export type RunSettings = {
  /** INDEXER_POLL_INTERVAL_MS: the next poll is this long after the last pass ended. */
  pollIntervalMs: number;
  /** INDEXER_TRACES. */
  traces: TraceMode;
  /** INDEXER_TRANSFERS. */
  transfers: TransferMode;
  /** INDEXER_TRANSFER_LOOKBACK_BLOCKS. */
  transferLookbackBlocks: number;
  /** INDEXER_DELEGATIONS (a network's INDEXER_DELEGATIONS_<NETWORK> goes over it). */
  delegations: DelegationMode;
  tuning: IndexerTuning;
};

/** The configuration a network's run settings come from; a setting absent takes the schema's default. */
export type RunSettingsConfig = Partial<
  Pick<
    IndexerConfig,
    'INDEXER_POLL_INTERVAL_MS' | 'INDEXER_TRACES' | 'INDEXER_TRANSFERS' | 'INDEXER_TRANSFER_LOOKBACK_BLOCKS' | 'INDEXER_DELEGATIONS'
  >
>;

/** The schema's defaults of the four settings (what an unset variable becomes). */
const SCHEMA_DEFAULTS = indexerEnvSchema
  .pick({
    INDEXER_POLL_INTERVAL_MS: true,
    INDEXER_TRACES: true,
    INDEXER_TRANSFERS: true,
    INDEXER_TRANSFER_LOOKBACK_BLOCKS: true,
    INDEXER_DELEGATIONS: true,
  })
  .parse({});

/** The run settings of `config`, with `tuning` over the default knobs (tests shorten timeouts, narrow ranges). */
export function runSettingsOf(config: RunSettingsConfig, tuning: Partial<IndexerTuning> = {}): RunSettings {
  return {
    pollIntervalMs: config.INDEXER_POLL_INTERVAL_MS ?? SCHEMA_DEFAULTS.INDEXER_POLL_INTERVAL_MS,
    traces: config.INDEXER_TRACES ?? SCHEMA_DEFAULTS.INDEXER_TRACES,
    transfers: config.INDEXER_TRANSFERS ?? SCHEMA_DEFAULTS.INDEXER_TRANSFERS,
    transferLookbackBlocks: config.INDEXER_TRANSFER_LOOKBACK_BLOCKS ?? SCHEMA_DEFAULTS.INDEXER_TRANSFER_LOOKBACK_BLOCKS,
    delegations: config.INDEXER_DELEGATIONS ?? SCHEMA_DEFAULTS.INDEXER_DELEGATIONS,
    tuning: { ...DEFAULT_TUNING, ...tuning },
  };
}
