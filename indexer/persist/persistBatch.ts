/**
 * Writes one decoded block range in ONE transaction: the base rows, the aggregates they add
 * (counted for rows inserted for the first time only), the outbox events, the recent headers and
 * the cursor. The cursor row is locked and checked before anything that depends on order, so a
 * batch lands exactly once, right after the previous one, and on the chain the previous one
 * ended on.
 *
 * Two phases, so consecutive batches overlap: the base rows (most of the work, no shared keys
 * between batches) go first; then, once `after` — the previous batch's write — has committed,
 * the cursor check, the aggregates, the outbox (ids in chain order) and the cursor itself.
 */
import type { Db, Queryable } from '../../shared/db/client.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as addressTransactions from '../../shared/db/tables/addressTransactions.js';
import * as blocks from '../../shared/db/tables/blocks.js';
import * as bundlerDays from '../../shared/db/tables/bundlerDays.js';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as bundles from '../../shared/db/tables/bundles.js';
import * as dailyActiveWallets from '../../shared/db/tables/dailyActiveWallets.js';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import * as delegations from '../../shared/db/tables/delegations.js';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as entryPointDeposits from '../../shared/db/tables/entryPointDeposits.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import * as knownAddresses from '../../shared/db/tables/knownAddresses.js';
import * as moduleEvents from '../../shared/db/tables/moduleEvents.js';
import * as outboxEvents from '../../shared/db/tables/outboxEvents.js';
import * as tokens from '../../shared/db/tables/tokens.js';
import * as tokenTransfers from '../../shared/db/tables/tokenTransfers.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import type { DecodedBatch, DecodedBundle, DecodedUserOp } from '../decode/decodedBatch.js';
import { accountActivity, bundlerDayIncrements, dailyIncrements, dayOf, entityIncrements } from './aggregates.js';
import { chainTextApart, isContentRefusal, putTextBack, type RefusedText } from './chainTextApart.js';
import { opEvents } from './outbox.js';

/** The batch does not continue the stored chain: the previous block's hash differs (a reorg). */
export class ParentMismatchError extends Error {
  constructor(readonly blockNumber: number) {
    super(`block ${blockNumber} does not extend the indexed chain`);
    this.name = 'ParentMismatchError';
  }
}

/** The cursor is not where this batch starts (another writer, or a stale pipeline). */
export class CursorMovedError extends Error {}

export type PersistOptions = {
  /** The chain head when the range was planned (indexer_state.head_block). */
  headBlock: number;
  /** Headers below this block are pruned (outside the reorg window). */
  keepHeadersFrom: number;
  backfillComplete: boolean;
  /** The previous batch's write: the ordered phase waits for its commit (and fails if it failed). */
  after?: Promise<unknown>;
};

export type PersistResult = {
  newUserOps: number;
  newBundles: number;
  /** Texts from the chain PostgreSQL refused even under the rule for them: stored as null (chainTextApart.ts). */
  refusedText: RefusedText[];
};

/** A lock wait longer than this is a bug (see the phase comment below): fail, roll back, retry. */
const LOCK_TIMEOUT = '30s';

export async function persistBatch(db: Db, batch: DecodedBatch, options: PersistOptions): Promise<PersistResult> {
  const write = (mode: BaseRowsMode, text: 'inline' | 'apart') =>
    db.transaction(async (tx) => {
      await tx.query(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
      if (text === 'inline') return { ...(await writeBatch(tx, batch, options, mode)), refusedText: [] };
      const { stripped, writes } = chainTextApart(batch);
      const result = await writeBatch(tx, stripped, options, mode);
      return { ...result, refusedText: await putTextBack(tx, writes) };
    });
  const writeOnce = async (text: 'inline' | 'apart'): Promise<PersistResult> => {
    try {
      return await write('append', text);
    } catch (err) {
      // Some rows are stored already (see writeBaseRows): the batch again, skipping them.
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      return write('skipStored', text);
    }
  };
  try {
    return await writeOnce('inline');
  } catch (err) {
    // A text from the chain PostgreSQL refuses must not hold the network at this block.
    if (!isContentRefusal(err)) throw err;
    return writeOnce('apart');
  }
}

async function checkCursor(tx: Queryable, batch: DecodedBatch): Promise<void> {
  const cursor = await indexerState.findCursor(tx, batch.chainId, true);
  if (!cursor) throw new CursorMovedError(`no indexer_state row for chain ${batch.chainId}`);
  if (cursor.indexedBlock !== batch.fromBlock - 1) {
    throw new CursorMovedError(`cursor at ${cursor.indexedBlock}, batch starts at ${batch.fromBlock}`);
  }
  const first = batch.headers.find((h) => h.number === batch.fromBlock);
  if (cursor.indexedBlockHash && first && first.parentHash !== cursor.indexedBlockHash) throw new ParentMismatchError(batch.fromBlock);
}

type NewRows = { newOps: DecodedUserOp[]; newBundles: DecodedBundle[] };

/** unique_violation: a key the batch appends is stored already. */
const UNIQUE_VIOLATION = '23505';

/**
 * How the base rows go in: 'append' with COPY, failing on a duplicate key; 'skipStored' with
 * inserts that skip the rows stored already.
 */
type BaseRowsMode = 'append' | 'skipStored';

/**
 * The base rows of a range, with COPY (shared/db/copy.ts): the rows of a range indexed for the
 * first time — the normal case, the cursor guarantees it — are all new. When some are stored
 * already (the range is indexed again, e.g. after the cursor was moved back) the COPY fails on a
 * duplicate key, which fails the transaction; persistBatch then writes the batch again in
 * 'skipStored' mode, where only the new rows count. (Not a savepoint around the COPYs: that cost
 * two round trips on every batch, the head's one-block batches included, for a case that is rare.)
 */
async function writeBaseRows(tx: Queryable, batch: DecodedBatch, mode: BaseRowsMode): Promise<NewRows> {
  const chainId = batch.chainId;
  const containers = userOps.opContainers(batch.bundleTxs, batch.bundles);
  if (mode === 'append') {
    await bundleTransactions.appendMany(tx, chainId, batch.bundleTxs);
    await userOps.appendMany(tx, chainId, batch.userOps, containers);
    await bundles.appendMany(tx, chainId, batch.bundles);
    await tokenTransfers.appendMany(tx, chainId, batch.transfers);
    await entryPointDeposits.appendMany(tx, chainId, batch.deposits);
    await userOpTraces.appendMany(tx, chainId, batch.traces);
    await addressTransactions.appendMany(tx, chainId, batch.addressTxs);
    await moduleEvents.appendMany(tx, chainId, batch.moduleEvents);
    await delegations.appendMany(tx, chainId, batch.delegations);
    return { newOps: batch.userOps, newBundles: batch.bundles };
  }
  await bundleTransactions.insertMany(tx, chainId, batch.bundleTxs);
  const newHashes = await userOps.insertMany(tx, chainId, batch.userOps, containers);
  const newBundleKeys = await bundles.insertMany(tx, chainId, batch.bundles);
  const newOps = batch.userOps.filter((o) => newHashes.has(o.userOpHash));
  await tokenTransfers.insertMany(tx, chainId, batch.transfers);
  await entryPointDeposits.insertMany(tx, chainId, batch.deposits);
  await userOpTraces.insertMany(
    tx,
    chainId,
    batch.traces.filter((t) => newHashes.has(t.userOpHash)),
  );
  await addressTransactions.insertMany(tx, chainId, batch.addressTxs);
  await moduleEvents.insertMany(tx, chainId, batch.moduleEvents);
  await delegations.insertMany(tx, chainId, batch.delegations);
  return { newOps, newBundles: batch.bundles.filter((b) => newBundleKeys.has(`${b.txHash}:${b.bundleIndex}`)) };
}

async function writeBatch(
  tx: Queryable,
  batch: DecodedBatch,
  options: PersistOptions,
  mode: BaseRowsMode,
): Promise<Omit<PersistResult, 'refusedText'>> {
  const chainId = batch.chainId;
  const { newOps, newBundles } = await writeBaseRows(tx, batch, mode);
  await blocks.upsertMany(tx, chainId, batch.headers);

  if (options.after) {
    await options.after.catch((err: unknown) => {
      throw new CursorMovedError(`the previous batch failed: ${(err as Error).message}`);
    });
  }
  await checkCursor(tx, batch);
  // Keys two batches may share (a token first seen in both) are written only here, in commit
  // order: in phase one the next batch would wait on the previous one's row lock while the
  // previous one waits for it to finish — a deadlock Postgres cannot see.
  await tokens.insertMany(tx, chainId, batch.tokenMetadata);
  await knownAddresses.insertMany(tx, chainId, batch.knownAddresses);
  // Aggregates: only what is new in this transaction counts.
  const senderFactories = await accounts.listFactories(tx, chainId, [...new Set(newOps.map((o) => o.sender))]);
  const txFees = new Map(batch.bundleTxs.map((t) => [t.txHash, t.fee]));
  await entityStats.upsertIncrements(tx, chainId, entityIncrements(newOps, txFees));
  const activePairs = [
    ...new Map(newOps.map((o) => [`${dayOf(o.blockTime)}:${o.sender}`, { day: dayOf(o.blockTime), address: o.sender }])).values(),
  ];
  const newActive = await dailyActiveWallets.insertMany(tx, chainId, activePairs);
  await dailyStats.upsertIncrements(tx, chainId, dailyIncrements(newOps, newBundles, newActive));
  await bundlerDays.upsertIncrements(tx, chainId, bundlerDayIncrements(newBundles));
  await dailyStats.closePastDays(tx, chainId);
  await accounts.upsertActivity(tx, chainId, accountActivity(newOps));
  await outboxEvents.insertMany(tx, chainId, opEvents(newOps, batch.transfers, senderFactories));

  await blocks.deleteBelow(tx, chainId, Math.min(options.keepHeadersFrom, batch.toBlock));
  const last = batch.headers.find((h) => h.number === batch.toBlock);
  if (!last) throw new Error(`batch ${batch.fromBlock}-${batch.toBlock} lacks the header of its last block`);
  await indexerState.updateCursor(tx, {
    chainId,
    indexedBlock: batch.toBlock,
    indexedBlockHash: last.hash,
    headBlock: options.headBlock,
    backfillComplete: options.backfillComplete,
  });
  return { newUserOps: newOps.length, newBundles: newBundles.length };
}
