/**
 * What a pass does once a network's indexed data has reached the head, before the pass ends, each
 * bounded so that the head is never held back for long: the earlier token transfers of the
 * addresses that became known since the last pass (INDEXER_TRANSFERS=known) and the
 * implementations of accounts not named yet, each for a slice of time, then, now and then, the
 * repair of the ops left trace_needed. `run` says whether anything still waits: the caller looks at
 * the head again (indexing any new block first) and runs the chores again.
 */
import type { Db } from '../../shared/db/client.js';
import type { Logger } from '../../shared/log.js';
import type { RunSettings } from '../runSettings.js';
import { backfillTransfers } from './backfillTransfers.js';
import { LogRangeEstimator } from './fetchLogs.js';
import type { ChainSource } from './fetchRange.js';
import { nameAccounts, type NamingMemory } from './nameAccounts.js';
import { repairTraceNeeded } from './repairTraceNeeded.js';

export class HeadChores {
  /** When the repair pass last ran (0: not yet, so it runs when the head is first reached). */
  private lastRepairAt = 0;
  /** The transfer backfill's log range estimate (topic-filtered queries span far more blocks than a range's). */
  private readonly backfillEstimator: LogRangeEstimator;
  /** What the account-naming passes learned: implementations' code hashes, whether the node keeps old state. */
  private readonly naming: NamingMemory = { codeHashes: new Map(), readAtLatest: false };

  constructor(
    private readonly deps: {
      db: Db;
      /** The network's chain source: its RPC client, EntryPoints and trace support. */
      source: ChainSource;
      log: Logger;
      settings: RunSettings;
      /** Tokens whose metadata is stored (shared with the range pipeline, which adds those its batches store). */
      tokensWithMetadata: Set<string>;
    },
  ) {
    const { maxLogRange } = deps.settings.tuning;
    this.backfillEstimator = new LogRangeEstimator({ initialRange: maxLogRange, maxRange: maxLogRange * 10 });
  }

  /** Runs the chores due; resolves to whether none still waits (else the caller checks the head and runs them again). */
  async run(shouldStop: () => boolean): Promise<boolean> {
    // A slice at a time, the head checked in between, until no address waits.
    if (!(await this.backfillTransfers(shouldStop))) return false;
    if (!(await this.nameNewAccounts(shouldStop))) return false;
    await this.repairWhenDue(shouldStop);
    return true;
  }

  /**
   * INDEXER_TRANSFERS=known: the earlier token transfers of the addresses that became known since
   * the last pass, for one slice of time (transferBackfillSliceMs). Resolves to whether none waits.
   */
  private async backfillTransfers(shouldStop: () => boolean): Promise<boolean> {
    const { settings, source } = this.deps;
    if (settings.transfers !== 'known') return true;
    const t0 = performance.now();
    const result = await backfillTransfers({
      db: this.deps.db,
      rpc: source.rpc,
      chainId: source.chainId,
      estimator: this.backfillEstimator,
      addressesPerCall: settings.tuning.transferBackfillAddresses,
      lookbackBlocks: settings.transferLookbackBlocks,
      shouldStop: () => shouldStop() || performance.now() - t0 > settings.tuning.transferBackfillSliceMs,
      tokensWithMetadata: this.deps.tokensWithMetadata,
    });
    // Every few seconds while addresses become known: debug level, like the per-batch lines.
    if (result.addresses > 0)
      this.deps.log.debug({ ...result, ms: Math.round(performance.now() - t0) }, 'token transfers of newly known addresses backfilled');
    return result.complete || shouldStop();
  }

  /**
   * The implementation of accounts not named yet, for one slice of time (accountNamingSliceMs):
   * off the hot path, like the transfer backfill. Resolves to whether none waits (or the pass must
   * stop, or the node answers nothing: those accounts wait for the next pass).
   */
  private async nameNewAccounts(shouldStop: () => boolean): Promise<boolean> {
    const { settings, source, log } = this.deps;
    const t0 = performance.now();
    const result = await nameAccounts({
      db: this.deps.db,
      rpc: source.rpc,
      chainId: source.chainId,
      log,
      sliceSize: settings.tuning.accountNamingBatch,
      memory: this.naming,
      shouldStop: () => shouldStop() || performance.now() - t0 > settings.tuning.accountNamingSliceMs,
    });
    if (result.named + result.unknown > 0)
      log.debug({ ...result, ms: Math.round(performance.now() - t0) }, 'account implementations named');
    return result.complete || result.stalled || shouldStop();
  }

  /**
   * Now and then: the ops left trace_needed (their bundle went through another contract while the
   * node could not trace) are traced and decoded again, so that state is never final. Never under
   * INDEXER_TRACES=off.
   */
  private async repairWhenDue(shouldStop: () => boolean): Promise<void> {
    const { settings } = this.deps;
    if (settings.traces === 'off' || Date.now() - this.lastRepairAt < settings.tuning.traceRepairIntervalMs) return;
    this.lastRepairAt = Date.now();
    const result = await repairTraceNeeded({
      db: this.deps.db,
      source: this.deps.source,
      batchSize: settings.tuning.traceRepairBatch,
      shouldStop,
    });
    if (result.repairedOps > 0 || result.untraceable) this.deps.log.info(result, 'repair pass over trace_needed ops');
  }
}
