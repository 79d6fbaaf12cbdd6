/**
 * Brings one network's indexed data up to the chain head, a round at a time: checks the stored
 * tip against the chain (a reorg is repaired first), indexes the blocks above it through a
 * RangePipeline (rangePipeline.ts: ranges fetched ahead, decoded and written in chain order, one
 * transaction per range), and once at the head runs the HeadChores (headChores.ts) before the pass
 * ends. Safe to stop between batches: the cursor only moves with the data.
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
import { describeTokens } from './describeTokens.js';
import { LogRangeEstimator } from './fetchLogs.js';
import { InconsistentRangeError, fetchRange, settleTokenLogs, tokenLogPartiesOf, type ChainSource } from './fetchRange.js';
import { KnownAddressSet } from './knownAddressSet.js';
import { PrefetchDepth } from './prefetchDepth.js';
import { chainHashes, findCommonAncestor } from './findCommonAncestor.js';
import { findStartBlock } from './findStartBlock.js';
import { HeadChores } from './headChores.js';
import { RangePipeline } from './rangePipeline.js';
import type { AnnouncedHead } from './headSubscription.js';
import { RpcClient } from './rpcClient.js';

/** A range decoded, and when its decoding started and ended (for the per-batch timing line). */
type DecodedRange = { batch: DecodedBatch; fetchedAt: number; decodedAt: number };

export class NetworkSync {
  readonly rpc: RpcClient;
  private readonly source: ChainSource;
  private readonly entryPoints: Map<string, EntryPointVersion>;
  /** Tokens whose metadata is stored (saves a lookup per batch); the head chores' transfer backfill adds to it too. */
  private readonly tokensWithMetadata = new Set<string>();
  /** The work done at the head before a pass ends (transfer backfill, account naming, trace repair). */
  private readonly headChores: HeadChores;
  /**
   * INDEXER_TRANSFERS=known: the addresses whose token transfers are indexed (known_addresses, and
   * the parties of ranges decoded since); every range's token logs are checked against it.
   */
  private readonly knownAddressSet: KnownAddressSet;
  /** The known addresses were loaded (or, under ops, their backfill reset) since this process last became the writer. */
  private knownAddressesLoaded = false;

  /** Aborted by stop(): the RPC calls of a pass in flight are no longer retried. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly network: NetworkConfig,
    private readonly log: Logger,
    private readonly settings: RunSettings,
  ) {
    const { tuning } = settings;
    this.knownAddressSet = new KnownAddressSet(db, network.chainId, tuning.knownFilterSaveAddresses);
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
      delegations: network.delegations ?? settings.delegations,
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
              mayBeKnown: (a: string) => this.knownAddressSet.mayBeKnown(a),
            },
          }
        : {}),
    };
    this.headChores = new HeadChores({ db, source: this.source, log, settings, tokensWithMetadata: this.tokensWithMetadata });
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
    this.knownAddressesLoaded = false;
    await this.rpc.checkEndpoints();
    if (await indexerState.findCursor(this.db, this.chainId)) return;
    const startBlock =
      this.network.startBlock ?? (await findStartBlock(this.rpc, [...this.entryPoints.keys()], await this.head(), this.log));
    await indexerState.insertIfMissing(this.db, { chainId: this.chainId, network: this.network.name, startBlock });
    this.log.info({ startBlock }, 'indexer state created');
  }

  /** INDEXER_TRANSFERS: known builds the known addresses' filter; ops forgets what was backfilled (see knownAddresses.resetBackfill). */
  private async loadKnownAddresses(): Promise<void> {
    this.knownAddressesLoaded = true;
    if (this.settings.transfers === 'ops') {
      await knownAddresses.resetBackfill(this.db, this.chainId);
      return;
    }
    const t0 = performance.now();
    const loaded = await this.knownAddressSet.load();
    this.log.info({ ...loaded, ms: Math.round(performance.now() - t0) }, 'known addresses loaded');
  }

  /**
   * INDEXER_TRANSFERS=known: stores the filter when enough addresses were added since it last was
   * (KnownAddressSet.saveWhenDue). Between passes only: no batch is being written.
   */
  private addressFilterSaveDue(): boolean {
    return this.settings.transfers === 'known' && this.knownAddressSet.saveDue;
  }

  private async saveAddressFilterWhenDue(cursor: indexerState.Cursor): Promise<void> {
    if (!this.addressFilterSaveDue()) return;
    const t0 = performance.now();
    if (await this.knownAddressSet.saveWhenDue(cursor))
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
    if (!this.knownAddressesLoaded) await this.loadKnownAddresses();
    let indexed = false;
    for (let round = 0; !shouldStop(); round++) {
      const cursor = await indexerState.findCursor(this.db, this.chainId);
      if (!cursor) throw new Error(`no indexer_state for ${this.network.name}; init() first`);
      await this.saveAddressFilterWhenDue(cursor);
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
        if (!(await this.headChores.run(shouldStop))) continue;
        return indexed;
      }
      try {
        indexed = true;
        // A long history pauses between batches whenever the known-address filter is due to be
        // stored (the next round stores it), so that a restart never reads far more than that.
        await this.indexRange(cursor.indexedBlock + 1, head, () => shouldStop() || this.addressFilterSaveDue());
      } catch (err) {
        if (!(err instanceof ParentMismatchError)) throw err;
        await this.repairReorg(err.blockNumber - 1);
      }
    }
    return indexed;
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
    this.knownAddressSet.forgetUncommitted();
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

  /** Indexes blocks `from` to `head` through a RangePipeline: fetched ahead, decoded in order, written in order. */
  private async indexRange(from: number, head: number, shouldStop: () => boolean): Promise<void> {
    const { tuning } = this.settings;
    const windowFrom = head - this.network.finalityDepth - tuning.reorgMarginBlocks;
    const progress = new Progress(this.log, from, head);
    const prefetchDepth = new PrefetchDepth({
      min: tuning.prefetchRanges,
      max: tuning.maxPrefetchRanges,
      logsInFlight: tuning.prefetchLogsInFlight,
    });
    const rpcStats = this.rpc.stats;
    let rateLimited = rpcStats.rateLimited;
    /** Tokens a range ahead is describing: its batch stores them, and commits first. */
    const describing = new Set<string>();
    // As many ranges in flight as hide the provider's latency (PrefetchDepth), half as many once it
    // refuses calls for their pace. Memory is bounded by the raw logs in flight
    // (prefetchLogsInFlight) and concurrentWrites batches of at most targetLogsPerRange EntryPoint
    // logs each; two writes run at once (persistBatch orders their commits).
    const depth = {
      get current(): number {
        if (rpcStats.rateLimited > rateLimited) {
          rateLimited = rpcStats.rateLimited;
          prefetchDepth.rateLimited();
        }
        return prefetchDepth.current;
      },
      waited: (ms: number) => prefetchDepth.waited(ms),
    };
    const pipeline = new RangePipeline<RawRange, DecodedRange>({
      fromBlock: from,
      toBlock: head,
      rangeSize: () => this.source.estimator.size,
      depth,
      concurrentWrites: tuning.concurrentWrites,
      fetch: async (range) => {
        const raw = await this.fetch({ ...range, windowFrom });
        prefetchDepth.fetched(raw.entryPointLogs.length + (raw.tokenLogs?.length ?? 0));
        return raw;
      },
      // In chain order, because a range's token logs are kept for the addresses known by then,
      // those the ranges before it made known included.
      decode: async (raw) => {
        let knownTransfers: KnownTransfers | undefined;
        if (this.settings.transfers === 'known') {
          const knownParties = await this.knownAddressSet.knownAmong(tokenLogPartiesOf(raw));
          await settleTokenLogs(this.rpc, raw, knownParties);
          knownTransfers = { isKnown: (a) => knownParties.has(a), lookbackBlocks: this.settings.transferLookbackBlocks };
        }
        const fetchedAt = performance.now();
        const batch = decodeRange(raw, this.entryPoints, this.settings.traces, knownTransfers);
        if (knownTransfers) this.knownAddressSet.add(batch.knownAddresses.map((k) => k.address));
        return { batch, fetchedAt, decodedAt: performance.now() };
      },
      // New tokens' metadata is read as soon as the range is decoded, beside the other ranges'
      // fetches (not on the writer's path, where it would cost a round trip per range).
      prepareWrite: async (decoded) => {
        decoded.batch.tokenMetadata = await this.newTokenMetadata(decoded.batch, describing);
        return decoded;
      },
      write: ({ batch, fetchedAt, decodedAt }, range) => {
        const write = persistBatch(this.db, batch, {
          headBlock: head,
          keepHeadersFrom: windowFrom,
          backfillComplete: range.last,
          after: range.after,
        }).then((result) => {
          for (const refused of result.refusedText)
            this.log.warn(refused, 'PostgreSQL refused a text from the chain: the batch is stored without it');
          for (const t of batch.tokenMetadata) this.tokensWithMetadata.add(t.address);
          if (this.settings.transfers === 'known') this.knownAddressSet.committed(batch.knownAddresses.map((k) => k.address));
          progress.add(range.toBlock, result.newUserOps, (performance.now() - range.startedAt) / 1000);
          const undecoded = batch.userOps.filter((o) => o.calls.length === 0 && o.callData !== null && o.callData !== '0x').length;
          indexerMetrics.undecodedCallData(this.network.name, undecoded);
          // Where a batch's time goes (which stage bounds throughput), for tuning. Decoding ran when
          // the range arrived; waitFetchMs is how long the writer waited for a decoded range.
          const ms = (a: number, b: number): number => Math.round(b - a);
          this.log.debug(
            {
              fromBlock: batch.fromBlock,
              toBlock: range.toBlock,
              userOps: batch.userOps.length,
              waitFetchMs: Math.round(range.waitedForRangeMs),
              decodeMs: ms(fetchedAt, decodedAt),
              waitWriteMs: Math.round(range.waitedForWriteMs),
              writeMs: ms(range.startedAt, performance.now()),
            },
            'batch written',
          );
        });
        write.catch((err: unknown) => this.noteWriteFailure(batch, err));
        return write;
      },
    });
    await pipeline.run(shouldStop);
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
    const unseen = batch.tokens.filter((t) => !this.tokensWithMetadata.has(t.address) && !describing.has(t.address));
    for (const t of unseen) describing.add(t.address);
    if (unseen.length === 0) return [];
    const stored = await tokens.listKnown(
      this.db,
      this.chainId,
      unseen.map((t) => t.address),
    );
    for (const a of stored) this.tokensWithMetadata.add(a);
    const missing = unseen.filter((t) => !stored.has(t.address));
    return missing.length === 0 ? [] : describeTokens(this.rpc, missing);
  }
}
