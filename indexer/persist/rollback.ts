/**
 * Undoes everything above a reorg's common ancestor in ONE transaction: deletes the rows of the
 * replaced blocks, rebuilds from the base tables the aggregates those rows had touched (their
 * bundlers, paymasters, factories, beneficiaries, senders and days), moves the cursor back, bumps
 * reorg_epoch (and final_epoch when blocks held final left) and announces the removal in the outbox. Afterwards every table describes the chain
 * up to the ancestor exactly as if the removed blocks had never been indexed.
 */
import type { Db } from '../../shared/db/client.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as addressTransactions from '../../shared/db/tables/addressTransactions.js';
import * as blocks from '../../shared/db/tables/blocks.js';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as bundlerDays from '../../shared/db/tables/bundlerDays.js';
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
import * as tokenTransfers from '../../shared/db/tables/tokenTransfers.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import { dayOf } from './aggregates.js';
import { reorgEvent } from './outbox.js';

export type RollbackResult = { removedUserOps: number; removedAccounts: number };

const unique = <T>(values: Array<T | null>): T[] => [...new Set(values.filter((v): v is T => v !== null))];

/** `beyondFinality`: the removed blocks include some the indexer held final (deeper than the finality depth). */
export async function rollbackTo(
  db: Db,
  chainId: number,
  ancestor: { number: number; hash: string },
  options: { beyondFinality?: boolean } = {},
): Promise<RollbackResult> {
  const beyondFinality = options.beyondFinality ?? false;
  return db.transaction(async (tx) => {
    await indexerState.findCursor(tx, chainId, true);
    const removed = await userOps.deleteAbove(tx, chainId, ancestor.number);
    const hashes = removed.map((o) => o.userOpHash);
    await userOpTraces.deleteByUserOps(tx, chainId, hashes);
    const removedBundles = await bundles.deleteAbove(tx, chainId, ancestor.number);
    await bundlerDays.subtract(tx, chainId, removedBundles);
    await bundleTransactions.deleteAbove(tx, chainId, ancestor.number);
    await tokenTransfers.deleteAbove(tx, chainId, ancestor.number);
    await knownAddresses.deleteAbove(tx, chainId, ancestor.number);
    await entryPointDeposits.deleteAbove(tx, chainId, ancestor.number);
    await addressTransactions.deleteAbove(tx, chainId, ancestor.number);
    await moduleEvents.deleteAbove(tx, chainId, ancestor.number);
    await delegations.deleteAbove(tx, chainId, ancestor.number);
    await blocks.deleteAbove(tx, chainId, ancestor.number);

    await entityStats.recompute(tx, chainId, 'bundler', unique(removed.map((o) => o.bundler)));
    await entityStats.recompute(tx, chainId, 'paymaster', unique(removed.map((o) => o.paymaster)));
    await entityStats.recompute(tx, chainId, 'factory', unique(removed.map((o) => o.factory)));
    await entityStats.recompute(tx, chainId, 'beneficiary', unique(removed.map((o) => o.beneficiary)));
    const days = unique([...removed.map((o) => dayOf(o.blockTime)), ...removedBundles.map((b) => b.day)]);
    await dailyActiveWallets.recompute(tx, chainId, days);
    await dailyStats.recompute(tx, chainId, days);
    await accounts.recompute(tx, chainId, unique(removed.map((o) => o.sender)));

    const removedAccounts = unique(removed.map((o) => (o.factory ? o.sender : null)));
    await outboxEvents.insertMany(tx, chainId, [reorgEvent(ancestor.number, hashes, removedAccounts, beyondFinality)]);
    // A rollback below everything (a new devnet chain) leaves no known hash to check the next batch against.
    await indexerState.rewind(
      tx,
      chainId,
      { number: ancestor.number, hash: /^0x[0-9a-f]{64}$/.test(ancestor.hash) ? ancestor.hash : null },
      beyondFinality,
    );
    return { removedUserOps: removed.length, removedAccounts: removedAccounts.length };
  });
}
