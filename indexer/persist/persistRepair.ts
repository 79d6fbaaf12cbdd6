/**
 * Writes what the repair pass decoded for bundle transactions whose ops were stored trace_needed,
 * in ONE transaction: the ops' calldata fields (only for ops still trace_needed, so a repair
 * counts once), their account calls, their bundles' beneficiary, the address rows the calls add,
 * their execution traces, and the aggregates calldata feeds (the beneficiary's entity stats,
 * accounts' EIP-7702 flag). Everything from events — the ops themselves, daily stats, other
 * entities, the outbox — was written when the block was indexed.
 */
import type { Db } from '../../shared/db/client.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as addressTransactions from '../../shared/db/tables/addressTransactions.js';
import * as bundles from '../../shared/db/tables/bundles.js';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import type { DecodedTx } from '../decode/decodeTransaction.js';
import { entityIncrements } from './aggregates.js';

/** Returns how many ops it decoded. */
export async function persistRepair(db: Db, chainId: number, decoded: DecodedTx[]): Promise<number> {
  const ops = decoded.flatMap((d) => d.userOps).filter((o) => o.decodeStatus !== 'trace_needed');
  if (ops.length === 0) return 0;
  return db.transaction(async (tx) => {
    // The transactions' inputs as decoded are the ones stored (a transaction's input never changes);
    // so are the bundles' beneficiaries (bundles.updateDecoded below: their ops were all trace_needed,
    // so they had none).
    const containers = userOps.opContainers(
      decoded.map((d) => d.bundleTx),
      decoded.flatMap((d) => d.bundles),
    );
    const repaired = await userOps.updateDecoded(tx, chainId, ops, containers);
    const newOps = ops.filter((o) => repaired.has(o.userOpHash));
    if (newOps.length === 0) return 0;
    const txHashes = new Set(newOps.map((o) => o.txHash));
    const repairedTxs = decoded.filter((d) => txHashes.has(d.bundleTx.txHash));

    await bundles.updateDecoded(
      tx,
      chainId,
      repairedTxs.flatMap((d) => d.bundles),
    );
    // Token transfers came from logs and are stored; the native ones are the calls' values, not rows.
    await addressTransactions.insertMany(
      tx,
      chainId,
      repairedTxs.flatMap((d) => d.addressTxs),
    );
    await userOpTraces.storeTraced(
      tx,
      chainId,
      repairedTxs.flatMap((d) => d.traces.flatMap((t) => (t.trace ? [{ userOpHash: t.userOpHash, trace: t.trace }] : []))),
    );

    const txFees = new Map(repairedTxs.map((d) => [d.bundleTx.txHash, d.bundleTx.fee]));
    await entityStats.upsertIncrements(
      tx,
      chainId,
      entityIncrements(newOps, txFees).filter((e) => e.kind === 'beneficiary'),
    );
    await accounts.markEip7702(tx, chainId, [...new Set(newOps.filter((o) => o.eip7702).map((o) => o.sender))]);
    return newOps.length;
  });
}
