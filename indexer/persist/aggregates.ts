/**
 * What a batch adds to the aggregate tables, computed from the rows it inserted for the first
 * time only (an op or bundle already stored adds nothing: re-runs never double count). The
 * definitions match the recompute queries in shared/db/tables (entityStats, dailyStats, accounts,
 * bundlerDays),
 * which rebuild the same numbers from the base tables after a reorg.
 */
import type { AccountActivity } from '../../shared/db/tables/accounts.js';
import type { BundlerDay } from '../../shared/db/tables/bundlerDays.js';
import type { DailyIncrement } from '../../shared/db/tables/dailyStats.js';
import type { EntityIncrement, EntityKind } from '../../shared/db/tables/entityStats.js';
import type { DecodedBundle, DecodedUserOp } from '../decode/decodedBatch.js';

const DAY_SECONDS = 86400;
export const dayOf = (blockTime: number): number => Math.floor(blockTime / DAY_SECONDS);

const ROLES: ReadonlyArray<[EntityKind, (o: DecodedUserOp) => string | null]> = [
  ['bundler', (o) => o.bundler],
  ['paymaster', (o) => o.paymaster],
  ['factory', (o) => o.factory],
  ['beneficiary', (o) => o.beneficiary],
];

type EntityAcc = EntityIncrement & { bundleKeys: Set<string>; txHashes: Set<string> };

export function entityIncrements(newOps: DecodedUserOp[], txFees: Map<string, bigint>): EntityIncrement[] {
  const acc = new Map<string, EntityAcc>();
  for (const op of newOps) {
    for (const [kind, roleOf] of ROLES) {
      const address = roleOf(op);
      if (!address) continue;
      const key = `${kind}:${address}`;
      let e = acc.get(key);
      if (!e) {
        e = {
          kind,
          address,
          userOps: 0,
          bundles: 0,
          accounts: 0,
          actualGasCost: 0n,
          txFee: 0n,
          firstSeenBlock: op.blockNumber,
          firstSeenDay: dayOf(op.blockTime),
          lastSeenBlock: op.blockNumber,
          bundleKeys: new Set(),
          txHashes: new Set(),
        };
        acc.set(key, e);
      }
      e.userOps++;
      if (op.factory) e.accounts++;
      e.actualGasCost += op.actualGasCost;
      e.bundleKeys.add(`${op.txHash}:${op.bundleIndex}`);
      if (!e.txHashes.has(op.txHash)) {
        e.txHashes.add(op.txHash);
        e.txFee += txFees.get(op.txHash) ?? 0n;
      }
      e.firstSeenBlock = Math.min(e.firstSeenBlock, op.blockNumber);
      e.firstSeenDay = Math.min(e.firstSeenDay, dayOf(op.blockTime));
      e.lastSeenBlock = Math.max(e.lastSeenBlock, op.blockNumber);
    }
  }
  return [...acc.values()].map(({ bundleKeys, txHashes: _, ...e }) => ({ ...e, bundles: bundleKeys.size }));
}

/** Per UTC day; `newActiveWallets` are the (day, sender) pairs daily_active_wallets did not hold yet. */
export function dailyIncrements(
  newOps: DecodedUserOp[],
  newBundles: DecodedBundle[],
  newActiveWallets: Array<{ day: number }>,
): DailyIncrement[] {
  const days = new Map<number, DailyIncrement>();
  const at = (day: number): DailyIncrement => {
    let d = days.get(day);
    if (!d) days.set(day, (d = { day, userOps: 0, bundles: 0, walletsCreated: 0, gasCostCollected: 0n, bundleFees: 0n, activeWallets: 0 }));
    return d;
  };
  for (const op of newOps) {
    const d = at(dayOf(op.blockTime));
    d.userOps++;
    d.gasCostCollected += op.actualGasCost;
    if (op.factory) d.walletsCreated++;
  }
  for (const b of newBundles) {
    const d = at(dayOf(b.blockTime));
    d.bundles++;
    d.bundleFees += b.feeShare;
  }
  for (const w of newActiveWallets) at(w.day).activeWallets++;
  return [...days.values()];
}

/** Per bundler and UTC day: its new bundles, their revenue and fee shares. */
export function bundlerDayIncrements(newBundles: DecodedBundle[]): BundlerDay[] {
  const acc = new Map<string, BundlerDay>();
  for (const b of newBundles) {
    const day = dayOf(b.blockTime);
    const key = `${b.bundler}:${day}`;
    let d = acc.get(key);
    if (!d) acc.set(key, (d = { bundler: b.bundler, day, bundles: 0, revenue: 0n, fees: 0n }));
    d.bundles++;
    d.revenue += b.actualGasCostSum;
    d.fees += b.feeShare;
  }
  return [...acc.values()];
}

export function accountActivity(newOps: DecodedUserOp[]): AccountActivity[] {
  const accounts = new Map<string, AccountActivity>();
  for (const op of newOps) {
    let a = accounts.get(op.sender);
    if (!a)
      accounts.set(
        op.sender,
        (a = {
          address: op.sender,
          userOps: 0,
          firstOpBlock: op.blockNumber,
          lastOpBlock: op.blockNumber,
          eip7702: false,
          deployment: null,
        }),
      );
    a.userOps++;
    a.eip7702 ||= op.eip7702;
    a.firstOpBlock = Math.min(a.firstOpBlock, op.blockNumber);
    a.lastOpBlock = Math.max(a.lastOpBlock, op.blockNumber);
    if (op.factory && !a.deployment) {
      a.deployment = {
        factory: op.factory,
        userOpHash: op.userOpHash,
        txHash: op.txHash,
        blockNumber: op.blockNumber,
        blockTime: op.blockTime,
      };
    }
  }
  return [...accounts.values()];
}
