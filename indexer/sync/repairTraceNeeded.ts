/**
 * The repair pass: ops whose bundle reached the EntryPoint through another contract (a multicall,
 * a smart bundler) while the node could not trace are stored from their events alone, with
 * decode_status trace_needed. This pass traces their transactions again, oldest first, and when
 * the node answers, decodes them and fills in what calldata gives (persist/persistRepair), so
 * trace_needed is never a final state. A node still without a debug API ends the pass at once.
 */
import type { Db } from '../../shared/db/client.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { decodeTransaction, type DecodedTx } from '../decode/decodeTransaction.js';
import { persistRepair } from '../persist/persistRepair.js';
import { fetchDetails, type ChainSource } from './fetchRange.js';

export type RepairResult = { transactions: number; repairedOps: number; untraceable: boolean };

export async function repairTraceNeeded(deps: {
  db: Db;
  source: ChainSource;
  batchSize: number;
  shouldStop: () => boolean;
}): Promise<RepairResult> {
  const { db, source } = deps;
  const result: RepairResult = { transactions: 0, repairedOps: 0, untraceable: false };
  // Hashes already tried in this pass: a transaction whose ops stay trace_needed is not asked twice.
  const tried = new Set<string>();
  while (!deps.shouldStop()) {
    const pending = (await userOps.listTraceNeededTransactions(db, source.chainId, deps.batchSize + tried.size)).filter(
      (t) => !tried.has(t.txHash),
    );
    if (pending.length === 0) break;
    const batch = pending.slice(0, deps.batchSize);
    for (const t of batch) tried.add(t.txHash);
    // Asked again even if the backfill learned the node cannot trace: it may have gained the API.
    const probe = { rpc: source.rpc, traceSupport: {} as { supported?: boolean } };
    const hashes = batch.map((t) => t.txHash);
    const fetched = await fetchDetails(probe, hashes, [], hashes);
    if (probe.traceSupport.supported === false) {
      result.untraceable = true;
      break;
    }
    source.traceSupport.supported = true;
    const decoded: DecodedTx[] = [];
    for (const t of batch) {
      const receipt = fetched.receipts.get(t.txHash);
      const tx = fetched.txs.get(t.txHash);
      const trace = fetched.traces.get(t.txHash);
      // A transaction that moved to another block since (a reorg the next pass repairs) waits.
      if (!receipt || !tx || !trace || receipt.blockHash.toLowerCase() !== t.blockHash) continue;
      decoded.push(
        decodeTransaction(
          { receipt, tx, trace, blockTime: t.blockTime },
          { chainId: source.chainId, entryPoints: source.entryPoints, traces: source.traces },
        ),
      );
    }
    result.transactions += decoded.length;
    result.repairedOps += await persistRepair(db, source.chainId, decoded);
  }
  return result;
}
