/**
 * INDEXER_TRANSFERS=known: the token transfers of addresses that became known after blocks where
 * they already took part in transfers (an account funded or airdropped before its deployment, a
 * paymaster topped up before its first op). The forward pass reads each range's token logs for
 * the addresses known then, a new party's from the range it appears in; this pass reads, once per
 * address, its logs of the INDEXER_TRANSFER_LOOKBACK_BLOCKS before that (from the first indexed
 * block at most), by topic filter (the node's log index answers it; no block is read whole), a
 * group of addresses per eth_getLogs. Bounded so: over a real network's history (tens of millions
 * of blocks, hosted nodes capping a call at 2,000–10,000 blocks) reading every address's whole
 * history would be millions of calls. An address whose later logs the forward pass did not read
 * (recorded under INDEXER_TRANSFERS=ops, or with backfill_to null) is read up
 * to the cursor.
 *
 * It runs between catch-up passes (never beside a range being written), a slice of time per pass,
 * one group at a time (resumable: a group is marked when written). Rows stored already (transfers of bundle transactions) are kept as they
 * are (attributed to their op): they are left out before writing, not sent to be skipped by the
 * insert's `on conflict` — on a chain of ops they are most of what the filters find (devnet, 20,000
 * ops: 27,818 transfers found, 23,062 of them in bundle transactions).
 */
import type { Db } from '../../shared/db/client.js';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import * as knownAddresses from '../../shared/db/tables/knownAddresses.js';
import type { KnownAddress } from '../../shared/db/tables/knownAddresses.js';
import * as tokens from '../../shared/db/tables/tokens.js';
import * as tokenTransfers from '../../shared/db/tables/tokenTransfers.js';
import { hexToNumber, type RpcLog } from '../decode/chainTypes.js';
import type { DecodedTransfer } from '../decode/decodedBatch.js';
import { transfersOf, type TokenStandard } from '../decode/transfers.js';
import { describeTokens } from './describeTokens.js';
import { fetchLogs, type LogRangeEstimator } from './fetchLogs.js';
import { fetchHeaders } from './fetchRange.js';
import type { RpcClient } from './rpcClient.js';
import { TOPICS } from '../../shared/chain/constants.js';

/** complete: no address waits (false when the pass stopped first). */
export type TransferBackfillResult = { addresses: number; transfers: number; complete: boolean };

const ZERO_HASH = `0x${'0'.repeat(64)}`;
const topicOf = (address: string): string => `0x${address.slice(2).padStart(64, '0')}`;

/** The token logs where one of `addresses` sends or receives, in [fromBlock, toBlock]. */
async function logsOf(
  rpc: RpcClient,
  estimator: LogRangeEstimator,
  addresses: string[],
  { fromBlock, toBlock }: { fromBlock: number; toBlock: number },
): Promise<RpcLog[]> {
  const topics = addresses.map(topicOf);
  // Three filters cover both sides of both layouts: Transfer(from, to) has the parties in topics
  // 1-2, TransferSingle/Batch(operator, from, to) in topics 2-3; topic 2 is shared.
  const filters = [
    [[TOPICS.transfer], topics],
    [[TOPICS.transfer, TOPICS.transferSingle, TOPICS.transferBatch], null, topics],
    [[TOPICS.transferSingle, TOPICS.transferBatch], null, null, topics],
  ];
  const answers = await Promise.all(filters.map((f) => fetchLogs(rpc, { fromBlock, toBlock, topics: f }, estimator)));
  return answers.flat().filter((l) => l.transactionHash !== ZERO_HASH);
}

type Window = { fromBlock: number; toBlock: number };

/** The blocks an address's earlier logs are read over: the lookback before its first block, to its backfill_to (or the cursor). */
export function backfillWindow(
  address: KnownAddress,
  { startBlock, cursor, lookbackBlocks }: { startBlock: number; cursor: number; lookbackBlocks: number },
): Window {
  return {
    fromBlock: Math.max(startBlock, address.firstBlock - lookbackBlocks),
    toBlock: Math.min(cursor, address.backfillTo ?? cursor),
  };
}

export async function backfillTransfers(deps: {
  db: Db;
  rpc: RpcClient;
  chainId: number;
  estimator: LogRangeEstimator;
  addressesPerCall: number;
  /** INDEXER_TRANSFER_LOOKBACK_BLOCKS. */
  lookbackBlocks: number;
  shouldStop: () => boolean;
  /** Tokens whose metadata is stored (shared with the forward pass), those it stores added. */
  tokensWithMetadata: Set<string>;
}): Promise<TransferBackfillResult> {
  const { db, rpc, chainId } = deps;
  const state = await indexerState.find(db, chainId);
  const result: TransferBackfillResult = { addresses: 0, transfers: 0, complete: true };
  if (!state || state.indexedBlock < state.startBlock) return result;
  const cursor = state.indexedBlock;
  // One group's logs are read while the previous group is written: the node's scans and the
  // database's writes overlap (the writes stay one at a time, in order).
  // A group's logs are read over the union of its addresses' windows (groups are of neighbouring
  // first blocks), and each transfer is kept when it lies in the window of one of its parties.
  const read = (group: KnownAddress[]): { pending: string[]; windows: Map<string, Window>; logs: Promise<RpcLog[]> } => {
    const bounds = { startBlock: state.startBlock, cursor, lookbackBlocks: deps.lookbackBlocks };
    const windows = new Map(group.map((a) => [a.address, backfillWindow(a, bounds)]));
    const pending = group.map((a) => a.address);
    const fromBlock = Math.min(...[...windows.values()].map((w) => w.fromBlock));
    const toBlock = Math.max(...[...windows.values()].map((w) => w.toBlock));
    const logs =
      pending.length === 0 || fromBlock > toBlock ? Promise.resolve([]) : logsOf(rpc, deps.estimator, pending, { fromBlock, toBlock });
    logs.catch(() => undefined); // awaited in turn below, unless the pass stops first
    return { pending, windows, logs };
  };
  let group = read(await knownAddresses.listPendingBackfill(db, chainId, deps.addressesPerCall));
  while (group.pending.length > 0 && !deps.shouldStop()) {
    const { pending, windows } = group;
    const inWindow = (address: string, block: number): boolean => {
      const w = windows.get(address);
      return w !== undefined && block >= w.fromBlock && block <= w.toBlock;
    };
    const logs = await group.logs;
    group = read(await knownAddresses.listPendingBackfill(db, chainId, deps.addressesPerCall, pending));
    const byKey = new Map<string, DecodedTransfer>();
    const times = new Map<number, number>();
    for (const log of logs) {
      const blockNumber = hexToNumber(log.blockNumber);
      if (log.blockTimestamp) times.set(blockNumber, hexToNumber(log.blockTimestamp));
      for (const t of transfersOf(log)) {
        if (!inWindow(t.from, blockNumber) && !inWindow(t.to, blockNumber)) continue;
        const txHash = log.transactionHash.toLowerCase();
        byKey.set(`${txHash}:${t.logIndex}:${t.batchIndex}`, { ...t, txHash, blockNumber, blockTime: 0, userOpHash: null });
      }
    }
    const found = [...byKey.values()];
    const storedBundleTxs = await bundleTransactions.listStored(db, chainId, [...new Set(found.map((r) => r.txHash))]);
    const rows = found.filter((r) => !storedBundleTxs.has(r.txHash));
    const untimed = [...new Set(rows.map((r) => r.blockNumber).filter((n) => !times.has(n)))];
    for (const h of untimed.length > 0 ? await fetchHeaders(rpc, untimed) : []) times.set(h.number, h.timestamp);
    for (const r of rows) r.blockTime = times.get(r.blockNumber)!;

    const tokenStandards = new Map(rows.map((r) => [r.token!, r.standard as TokenStandard]));
    const unseen = [...tokenStandards]
      .filter(([a]) => !deps.tokensWithMetadata.has(a))
      .map(([address, standard]) => ({ address, standard }));
    const stored = await tokens.listKnown(
      db,
      chainId,
      unseen.map((t) => t.address),
    );
    const missing = unseen.filter((t) => !stored.has(t.address));
    const metadata = missing.length === 0 ? [] : await describeTokens(rpc, missing);

    await db.transaction(async (tx) => {
      // The range indexed meanwhile is the forward pass's; a reorg below the cursor since the read
      // would have moved the cursor back: then nothing is written and the pass runs again.
      const now = await indexerState.findCursor(tx, chainId, true);
      if (!now || now.indexedBlock < cursor) throw new Error('the cursor moved back during the transfer backfill');
      await tokenTransfers.insertMany(tx, chainId, rows);
      await tokens.insertMany(tx, chainId, metadata);
      await knownAddresses.markBackfilled(tx, chainId, pending, cursor);
    });
    for (const a of [...stored, ...metadata.map((m) => m.address)]) deps.tokensWithMetadata.add(a);
    result.addresses += pending.length;
    result.transfers += rows.length;
  }
  result.complete = group.pending.length === 0;
  return result;
}
