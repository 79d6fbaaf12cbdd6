/**
 * Brings one network's indexed data up to the chain head: checks the stored tip against the
 * chain (a reorg is repaired first), then fetches ranges ahead (prefetch) while the previous one
 * is decoded and persisted, in order, one transaction per range. Safe to stop between batches:
 * the cursor only moves with the data.
 */
import pRetry from 'p-retry';
import { isDatabaseUnavailable, type Db } from '../../shared/db/client.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import * as knownAddresses from '../../shared/db/tables/knownAddresses.js';
import * as tokens from '../../shared/db/tables/tokens.js';
import type { NetworkConfig } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import type { EntryPointVersion } from '../../shared/networks.js';
import type { RawRange } from '../decode/chainTypes.js';
import type { DecodedBatch } from '../decode/decodedBatch.js';
import { decodeRange, type KnownTransfers } from '../decode/decodeRange.js';
import { CursorMovedError, ParentMismatchError, persistBatch } from '../persist/persistBatch.js';
import { rollbackTo } from '../persist/rollback.js';
import { indexerMetrics } from '../metrics.js';
import { Progress } from '../progress.js';
import type { RunSettings } from '../runSettings.js';
import { backfillTransfers } from './backfillTransfers.js';
import { describeTokens } from './describeTokens.js';
import { nameAccounts, type NamingMemory } from './nameAccounts.js';
import { LogRangeEstimator } from './fetchLogs.js';
import { InconsistentRangeError, fetchRange, settleTokenLogs, tokenLogPartiesOf, type ChainSource } from './fetchRange.js';
import { KnownAddressSet } from './knownAddressSet.js';
import { PrefetchDepth } from './prefetchDepth.js';
import { chainHashes, findCommonAncestor } from './findCommonAncestor.js';
import { findStartBlock } from './findStartBlock.js';
import { repairTraceNeeded } from './repairTraceNeeded.js';
import type { AnnouncedHead } from './headSubscription.js';
import { RpcClient } from './rpcClient.js';

export class NetworkSync {
  readonly rpc: RpcClient;
  private readonly source: ChainSource;
  private readonly entryPoints: Map<string, EntryPointVersion>;
  /** Tokens whose metadata is stored (saves a lookup per batch). */
  private readonly knownTokens = new Set<string>();
  /** When the repair pass last ran (0: not yet, so it runs when the head is first reached). */
  private lastRepairAt = 0;
  /**
   * INDEXER_TRANSFERS=known: the addresses whose token transfers are indexed (known_addresses, and
   * the parties of ranges decoded since); every range's token logs are checked against it.
   */
  private readonly known: KnownAddressSet;
  private knownLoaded = false;
  /** The backfill's log range estimate (topic-filtered queries span far more blocks than a range's). */
  private readonly backfillEstimator: LogRangeEstimator;
  /** What the account-naming passes learned: implementations' code hashes, whether the node keeps old state. */
  private readonly naming: NamingMemory = { codeHashes: new Map(), readAtLatest: false };

  /** Aborted by stop(): the RPC calls of a pass in flight are no longer retried. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly network: NetworkConfig,
    private readonly log: Logger,
    private readonly settings: RunSettings,
  ) {
    const { tuning } = settings;
    this.known = new KnownAddressSet(db, network.chainId, tuning.knownFilterSaveAddresses);
    this.rpc = new RpcClient({
      urls: network.rpcUrls,
      chainId: network.chainId,
      endpointRecheckMs: tuning.rpcEndpointRecheckMs,
      log,
      timeoutMs: tuning.rpcTimeoutMs,
      batchSize: tuning.rpcBatchSize,
      concurrency: tuning.rpcConcurrency,
      retries: tuning.rpcRetries,
      minRetryDelayMs: tuning.rpcMinRetryDelayMs,
      maxRetryDelayMs: tuning.rpcMaxRetryDelayMs,
      signal: this.stopping.signal,
    });
    this.entryPoints = new Map(network.entryPoints.map((e) => [e.address.toLowerCase(), e.version]));
    this.source = {
      rpc: this.rpc,
      chainId: network.chainId,
      entryPoints: this.entryPoints,
      estimator: new LogRangeEstimator({
        initialRange: tuning.initialLogRange,
        maxRange: tuning.maxLogRange,
        targetLogs: tuning.targetLogsPerRange,
      }),
      traces: settings.traces,
      traceSupport: {},
      onSkippedLog: (l) =>
        log.warn({ blockNumber: l.blockNumber, logIndex: l.logIndex }, 'skipped an EntryPoint log with a zero transaction hash'),
      ...(settings.transfers === 'known'
        ? {
            tokenLogs: {
              estimator: new LogRangeEstimator({
                initialRange: tuning.initialLogRange,
                maxRange: tuning.maxLogRange,
                // All token logs of a range, before filtering: a provider's answer size bounds them.
                targetLogs: 10_000,
              }),
              mayBeKnown: (a: string) => this.known.mayBeKnown(a),
            },
          }
        : {}),
    };
    this.backfillEstimator = new LogRangeEstimator({ initialRange: tuning.maxLogRange, maxRange: tuning.maxLogRange * 10 });
  }

  private get chainId(): number {
    return this.network.chainId;
  }

  /** Ends the RPC retries of a pass in flight (it fails at once); the sync is not used after. */
  stop(): void {
    this.stopping.abort(new Error('the indexer is stopping'));
  }

  async head(): Promise<number> {
    return Number(await this.rpc.call<string>('eth_blockNumber', [], (h) => typeof h === 'string' && /^0x[0-9a-f]+$/i.test(h)));
  }

  /**
   * Creates the cursor on first start: START_BLOCK_<NAME>, else the EntryPoints' deployment block.
   * Runs each time the process becomes the network's writer: the known addresses are loaded again
   * before the next pass, as another writer may have made some known while this one waited.
   */
  async init(): Promise<void> {
    this.knownLoaded = false;
    await this.rpc.checkEndpoints();
    if (await indexerState.findCursor(this.db, this.chainId)) return;
    const startBlock =
      this.network.startBlock ?? (await findStartBlock(this.rpc, [...this.entryPoints.keys()], await this.head(), this.log));
    await indexerState.insertIfMissing(this.db, { chainId: this.chainId, network: this.network.name, startBlock });
    this.log.info({ startBlock }, 'indexer state created');
  }

  /** INDEXER_TRANSFERS: known builds the known addresses' filter; ops forgets what was backfilled (see knownAddresses.resetBackfill). */
  private async loadKnown(): Promise<void> {
    this.knownLoaded = true;
    if (this.settings.transfers === 'ops') {
      await knownAddresses.resetBackfill(this.db, this.chainId);
      return;
    }
    const t0 = performance.now();
    const loaded = await this.known.load();
    this.log.info({ ...loaded, ms: Math.round(performance.now() - t0) }, 'known addresses loaded');
  }

  /**
   * INDEXER_TRANSFERS=known: stores the filter when enough addresses were added since it last was
   * (KnownAddressSet.saveWhenDue). Between passes only: no batch is being written.
   */
  private knownSaveDue(): boolean {
    return this.settings.transfers === 'known' && this.known.saveDue;
  }

  private async saveKnownWhenDue(cursor: indexerState.Cursor): Promise<void> {
    if (!this.knownSaveDue()) return;
    const t0 = performance.now();
    if (await this.known.saveWhenDue(cursor))
      this.log.info({ throughBlock: cursor.indexedBlock, ms: Math.round(performance.now() - t0) }, 'known address filter stored');
  }

  /**
   * Indexes up to the head (re-read after each pass), or up to `untilBlock` (a backfill of a range),
   * unless `shouldStop()` turns true. Resolves to whether it indexed any block.
   *
   * `announced`: a head the node just announced. When it is the block right after the stored tip
   * and names it as its parent (the common case when following the head), the first round takes it
   * as the head and the tip as still on the chain, without asking the node (eth_blockNumber and the
   * tip's header): two round trips fewer between a block's announcement and its commit.
   */
  async catchUp(shouldStop: () => boolean, untilBlock = Infinity, announced?: AnnouncedHead): Promise<boolean> {
    if (!this.knownLoaded) await this.loadKnown();
    let indexed = false;
    for (let round = 0; !shouldStop(); round++) {
      const cursor = await indexerState.findCursor(this.db, this.chainId);
      if (!cursor) throw new Error(`no indexer_state for ${this.network.name}; init() first`);
      await this.saveKnownWhenDue(cursor);
      const extendsTip =
        round === 0 &&
        announced !== undefined &&
        announced.number === cursor.indexedBlock + 1 &&
        announced.parentHash === cursor.indexedBlockHash?.toLowerCase();
      const chainHead = extendsTip ? announced.number : await this.head();
      const head = Math.min(chainHead, untilBlock);
      if (!extendsTip && (await this.tipReplaced(cursor, chainHead))) {
        await this.repairReorg(Math.min(cursor.indexedBlock, chainHead));
        continue;
      }
      if (cursor.indexedBlock >= head) {
        await indexerState.updateHead(this.db, this.chainId, chainHead);
        // A slice at a time, the head checked in between, until no address waits.
        if (!(await this.backfillTransfers(shouldStop))) continue;
        if (!(await this.nameNewAccounts(shouldStop))) continue;
        await this.repairWhenDue(shouldStop);
        return indexed;
      }
      try {
        indexed = true;
        // A long history pauses between batches whenever the known-address filter is due to be
        // stored (the next round stores it), so that a restart never reads far more than that.
        await this.indexRange(cursor.indexedBlock + 1, head, () => shouldStop() || this.knownSaveDue());
      } catch (err) {
        if (!(err instanceof ParentMismatchError)) throw err;
        await this.repairReorg(err.blockNumber - 1);
      }
    }
    return indexed;
  }

  /**
   * At the head, now and then: the ops left trace_needed (their bundle went through another
   * contract while the node could not trace) are traced and decoded again, so that state is never
   * final. Never under INDEXER_TRACES=off.
   */
  private async repairWhenDue(shouldStop: () => boolean): Promise<void> {
    if (this.settings.traces === 'off' || Date.now() - this.lastRepairAt < this.settings.tuning.traceRepairIntervalMs) return;
    this.lastRepairAt = Date.now();
    const result = await repairTraceNeeded({
      db: this.db,
      source: this.source,
      batchSize: this.settings.tuning.traceRepairBatch,
      shouldStop,
    });
    if (result.repairedOps > 0 || result.untraceable) this.log.info(result, 'repair pass over trace_needed ops');
  }

  /**
   * INDEXER_TRANSFERS=known: the earlier token transfers of the addresses that became known since
   * the last pass, for one slice of time (transferBackfillSliceMs). Resolves to whether none waits.
   */
  private async backfillTransfers(shouldStop: () => boolean): Promise<boolean> {
    if (this.settings.transfers !== 'known') return true;
    const t0 = performance.now();
    const result = await backfillTransfers({
      db: this.db,
      rpc: this.rpc,
      chainId: this.chainId,
      estimator: this.backfillEstimator,
      addressesPerCall: this.settings.tuning.transferBackfillAddresses,
      lookbackBlocks: this.settings.transferLookbackBlocks,
      shouldStop: () => shouldStop() || performance.now() - t0 > this.settings.tuning.transferBackfillSliceMs,
      knownTokens: this.knownTokens,
    });
    if (result.addresses > 0)
      this.log.info({ ...result, ms: Math.round(performance.now() - t0) }, 'token transfers of newly known addresses backfilled');
    return result.complete || shouldStop();
  }

  /**
   * The implementation of accounts not named yet, for one slice of time (accountNamingSliceMs):
   * off the hot path, like the transfer backfill. Resolves to whether none waits (or the pass must
   * stop, or the node answers nothing: those accounts wait for the next pass).
   */
  private async nameNewAccounts(shouldStop: () => boolean): Promise<boolean> {
    const t0 = performance.now();
    const result = await nameAccounts({
      db: this.db,
      rpc: this.rpc,
      chainId: this.chainId,
      log: this.log,
      sliceSize: this.settings.tuning.accountNamingBatch,
      memory: this.naming,
      shouldStop: () => shouldStop() || performance.now() - t0 > this.settings.tuning.accountNamingSliceMs,
    });
    if (result.named + result.unknown > 0)
      this.log.debug({ ...result, ms: Math.round(performance.now() - t0) }, 'account implementations named');
    return result.complete || result.stalled || shouldStop();
  }

  /** The stored tip is no longer on the chain (same height replaced, or the chain got shorter). */
  private async tipReplaced(cursor: indexerState.Cursor, head: number): Promise<boolean> {
    if (!cursor.indexedBlockHash) return false;
    if (head < cursor.indexedBlock) return true;
    const [hash] = await chainHashes(this.rpc, [cursor.indexedBlock]);
    return hash !== cursor.indexedBlockHash;
  }

  private async repairReorg(fromBlock: number): Promise<void> {
    const cursor = await indexerState.findCursor(this.db, this.chainId);
    const ancestor = await findCommonAncestor(this.db, this.rpc, this.chainId, fromBlock);
    // Blocks at or below indexed − finalityDepth were final: webhooks went out for them, answers
    // about them were cached as final. Removing one is rare and worth an operator's attention.
    const depth = (cursor?.indexedBlock ?? fromBlock) - ancestor.number;
    const beyondFinality = depth > this.network.finalityDepth;
    const result = await rollbackTo(this.db, this.chainId, ancestor, { beyondFinality });
    if (beyondFinality)
      this.log.warn(
        { commonAncestor: ancestor.number, depth, finalityDepth: this.network.finalityDepth, ...result },
        'reorg beyond finality: blocks held final left the chain; rolled back to the common ancestor',
      );
    else this.log.warn({ commonAncestor: ancestor.number, depth, ...result }, 'reorg: rolled back to the common ancestor');
    // Addresses first seen in the removed blocks left the table; the filter keeps them as (harmless)
    // false positives, and what in-flight ranges added is forgotten.
    this.known.forgetUncommitted();
    indexerMetrics.reorgRepaired(this.network.name);
  }

  private fetch(range: { fromBlock: number; toBlock: number; windowFrom: number }): Promise<RawRange> {
    // Only a range caught mid-reorg is fetched again here; RPC failures were retried below.
    return pRetry(() => fetchRange(this.source, range), {
      retries: 4,
      minTimeout: 200,
      shouldRetry: (err) => err instanceof InconsistentRangeError,
    });
  }

  private async indexRange(from: number, head: number, shouldStop: () => boolean): Promise<void> {
    const windowFrom = head - this.network.finalityDepth - this.settings.tuning.reorgMarginBlocks;
    const progress = new Progress(this.log, from, head);
    const depth = new PrefetchDepth({
      min: this.settings.tuning.prefetchRanges,
      max: this.settings.tuning.maxPrefetchRanges,
      logsInFlight: this.settings.tuning.prefetchLogsInFlight,
    });
    let rateLimited = this.rpc.stats.rateLimited;
    const queue: Array<{ toBlock: number; decoded: Promise<{ batch: DecodedBatch; fetchedAt: number; decodedAt: number }> }> = [];
    let next = from;
    let previous: Promise<unknown> = Promise.resolve();
    /** Tokens a range ahead is describing: its batch stores them, and commits first. */
    const describing = new Set<string>();
    const plan = (): void => {
      const toBlock = Math.min(head, next + this.source.estimator.size - 1);
      // Fetched ahead, decoded in chain order as soon as it and the range before are in: only the
      // (smaller) rows wait in the queue, never the raw answers. In order, because a range's token
      // logs are kept for the addresses known by then, those of the ranges before included.
      const fetched = this.fetch({ fromBlock: next, toBlock, windowFrom }).then((raw) => {
        depth.fetched(raw.entryPointLogs.length + (raw.tokenLogs?.length ?? 0));
        return raw;
      });
      const decoded = Promise.all([fetched, previous]).then(async ([raw]) => {
        let knownTransfers: KnownTransfers | undefined;
        if (this.settings.transfers === 'known') {
          const known = await this.known.knownAmong(tokenLogPartiesOf(raw));
          await settleTokenLogs(this.rpc, raw, known);
          knownTransfers = { isKnown: (a) => known.has(a), lookbackBlocks: this.settings.transferLookbackBlocks };
        }
        const fetchedAt = performance.now();
        const batch = decodeRange(raw, this.entryPoints, this.settings.traces, knownTransfers);
        if (knownTransfers) this.known.add(batch.knownAddresses.map((k) => k.address));
        return { batch, fetchedAt, decodedAt: performance.now() };
      });
      previous = decoded.catch(() => undefined);
      // New tokens' metadata is read as soon as the range is decoded, beside the other ranges'
      // fetches (not on the writer's path, where it would cost a round trip per range).
      const described = decoded.then(async (d) => {
        d.batch.tokenMetadata = await this.newTokenMetadata(d.batch, describing);
        return d;
      });
      described.catch(() => undefined); // awaited in order below; a failure ahead must not go unhandled
      queue.push({ toBlock, decoded: described });
      next = toBlock + 1;
    };
    // The stages overlap: ranges are fetched and decoded ahead, as many in flight as hide the
    // provider's latency (PrefetchDepth), and two writes run at once (persistBatch orders their
    // commits). Memory is bounded by the raw logs in flight (prefetchLogsInFlight) and
    // concurrentWrites batches of at most targetLogsPerRange EntryPoint logs each.
    const writes: Array<Promise<void>> = [];
    try {
      while ((next <= head || queue.length > 0) && !shouldStop()) {
        if (this.rpc.stats.rateLimited > rateLimited) {
          rateLimited = this.rpc.stats.rateLimited;
          depth.rateLimited();
        }
        while (queue.length < depth.current && next <= head) plan();
        const { toBlock, decoded } = queue.shift()!;
        const t0 = performance.now();
        const { batch, fetchedAt, decodedAt } = await decoded;
        const t1 = performance.now();
        depth.waited(t1 - t0);
        const t2 = performance.now();
        if (writes.length >= this.settings.tuning.concurrentWrites) await writes.shift();
        const t3 = performance.now();
        const write = persistBatch(this.db, batch, {
          headBlock: head,
          keepHeadersFrom: windowFrom,
          backfillComplete: toBlock >= head,
          after: writes.at(-1),
        }).then((result) => {
          for (const refused of result.refusedText)
            this.log.warn(refused, 'PostgreSQL refused a text from the chain: the batch is stored without it');
          for (const t of batch.tokenMetadata) this.knownTokens.add(t.address);
          if (this.settings.transfers === 'known') this.known.committed(batch.knownAddresses.map((k) => k.address));
          progress.add(toBlock, result.newUserOps, (performance.now() - t3) / 1000);
          const undecoded = batch.userOps.filter((o) => o.calls.length === 0 && o.callData !== null && o.callData !== '0x').length;
          indexerMetrics.undecodedCallData(this.network.name, undecoded);
          // Where a batch's time goes (which stage bounds throughput), for tuning. Decoding ran when
          // the range arrived; waitFetchMs is how long the writer waited for a decoded range.
          const ms = (a: number, b: number): number => Math.round(b - a);
          this.log.debug(
            {
              fromBlock: batch.fromBlock,
              toBlock,
              userOps: batch.userOps.length,
              waitFetchMs: ms(t0, t1),
              decodeMs: ms(fetchedAt, decodedAt),
              waitWriteMs: ms(t2, t3),
              writeMs: ms(t3, performance.now()),
            },
            'batch written',
          );
        });
        write.catch((err: unknown) => this.noteWriteFailure(batch, err)); // awaited in order below
        writes.push(write);
      }
      // Oldest first: the first failure is the root cause (later batches fail because of it).
      while (writes.length > 0) await writes.shift();
    } catch (err) {
      await Promise.allSettled(writes);
      throw err;
    }
  }

  /**
   * A batch that failed to commit for a reason of its own (not a reorg, another writer or a
   * database outage) holds the network at its first block until one commits: indexer_state says
   * so, for getNetworkStatus, the status page and /metrics (recordWriteFailure counts the attempts).
   */
  private noteWriteFailure(batch: DecodedBatch, err: unknown): void {
    if (err instanceof ParentMismatchError || err instanceof CursorMovedError || isDatabaseUnavailable(err)) return;
    const reason = err instanceof Error ? err.message : String(err);
    this.log.error({ err, fromBlock: batch.fromBlock, toBlock: batch.toBlock }, 'a batch failed to commit; it is written again');
    indexerState
      .recordWriteFailure(this.db, this.chainId, { fromBlock: batch.fromBlock, toBlock: batch.toBlock, reason })
      .catch((recordErr: unknown) => this.log.warn({ err: recordErr }, 'the write failure could not be recorded'));
  }

  /** Metadata of the batch's tokens neither stored nor being described for a range before (`describing`, which it joins). */
  private async newTokenMetadata(batch: DecodedBatch, describing: Set<string>): Promise<DecodedBatch['tokenMetadata']> {
    const unseen = batch.tokens.filter((t) => !this.knownTokens.has(t.address) && !describing.has(t.address));
    for (const t of unseen) describing.add(t.address);
    if (unseen.length === 0) return [];
    const stored = await tokens.listKnown(
      this.db,
      this.chainId,
      unseen.map((t) => t.address),
    );
    for (const a of stored) this.knownTokens.add(a);
    const missing = unseen.filter((t) => !stored.has(t.address));
    return missing.length === 0 ? [] : describeTokens(this.rpc, missing);
  }
}
