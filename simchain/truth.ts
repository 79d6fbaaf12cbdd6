/**
 * What opscan must store for a block range of the simulated chain, in the ground-truth shapes of
 * devnet/truth.ts (which test/indexer/storedTruth.ts reads opscan's tables into). Computed from the
 * same generator as the chain, never by asking the server. Token transfers inside bundle
 * transactions belong to the op whose execution emitted them (as opscan attributes them: the logs
 * between the previous op's UserOperationEvent, or BeforeExecution, and its own); native value moves
 * only for ops that succeeded.
 */
import { computeDays, knownAddresses, truthOpFields } from '../devnet/truth.js';
import type { TruthAccount, TruthBundle, TruthDay, TruthPlainTransfer, TruthTransfer, TruthUserOp } from '../devnet/truth.js';
import type { EpVersion } from '../devnet/userop.js';
import type { SimChainModel } from './chain.js';

export type RangeTruth = {
  chainId: number;
  fromBlock: number;
  toBlock: number;
  entryPoints: Record<EpVersion, string>;
  userOps: TruthUserOp[];
  bundles: TruthBundle[];
  accounts: TruthAccount[];
  transfers: TruthTransfer[];
  /** Per day of the range's ops (the range's first and last days may be partial). */
  days: TruthDay[];
  /** Senders, paymasters, factories and bundlers of the range's ops. */
  known: Set<string>;
};

export type SimTruth = {
  (fromBlock: number, toBlock: number): RangeTruth;
  /**
   * Token transfers of the range's plain (non-bundle) transactions with a party `isKnown` accepts:
   * what INDEXER_TRANSFERS=known stores, under whatever lookback rule the caller applies.
   */
  plainTransfers(fromBlock: number, toBlock: number, isKnown: (address: string) => boolean): TruthPlainTransfer[];
};

export function createTruth(model: SimChainModel): SimTruth {
  const range = (fromBlock: number, toBlock: number): RangeTruth => {
    const t: RangeTruth = {
      chainId: model.chainId,
      fromBlock,
      toBlock,
      entryPoints: model.entryPoints,
      userOps: [],
      bundles: [],
      accounts: [],
      transfers: [],
      days: [],
      known: new Set(),
    };
    for (let n = fromBlock; n <= toBlock; n++) {
      const sk = model.skeleton(n);
      sk.slots.forEach((slot, i) => {
        if (!slot.bundle) return;
        const sim = model.transaction(n, i);
        const bundle = sim.bundle!;
        const transactionHash = sim.tx.hash;
        const bundler = sim.tx.from;
        const where = { transactionHash, blockNumber: n, blockTime: sk.timestamp };
        for (const o of bundle.ops) {
          const op = o.op;
          t.userOps.push({
            userOpHash: o.hash,
            sender: o.sender,
            nonce: op.nonce.toString(),
            entryPoint: bundle.entryPoint,
            entryPointVersion: bundle.version,
            paymaster: o.paymaster,
            factory: o.factory,
            success: o.plan.success,
            revertReason: o.revertReason,
            actualGasCost: o.actualGasCost.toString(),
            actualGasUsed: o.plan.actualGasUsed.toString(),
            ...where,
            bundleIndex: 0,
            logIndex: o.logIndex,
            bundler,
            beneficiary: bundle.beneficiary,
            ...truthOpFields(op),
            calls: o.calls.map((c) => ({ target: c.target.toLowerCase(), value: c.value.toString(), data: c.data.toLowerCase() })),
          });
          if (o.factory) t.accounts.push({ address: o.sender, factory: o.factory, userOpHash: o.hash, ...where });
          for (const x of o.transfers) t.transfers.push({ ...x, userOpHash: o.hash, transactionHash });
        }
        const fee = BigInt(sim.receipt.gasUsed) * BigInt(sim.receipt.effectiveGasPrice) + BigInt(sim.receipt.l1Fee ?? 0);
        t.bundles.push({
          ...where,
          bundleIndex: 0,
          bundler,
          beneficiary: bundle.beneficiary,
          entryPoint: bundle.entryPoint,
          userOpHashes: bundle.ops.map((o) => o.hash),
          success: true,
          transactionFee: fee.toString(),
        });
      });
    }
    t.days = computeDays(t);
    t.known = knownAddresses(t);
    return t;
  };

  const plainTransfers = (fromBlock: number, toBlock: number, isKnown: (address: string) => boolean): TruthPlainTransfer[] => {
    const out: TruthPlainTransfer[] = [];
    for (let n = fromBlock; n <= toBlock; n++) {
      model.skeleton(n).slots.forEach((slot, i) => {
        if (slot.bundle || slot.logCount === 0) return;
        const sim = model.transaction(n, i);
        for (const x of sim.transfers) {
          if (!isKnown(x.from) && !isKnown(x.to)) continue;
          out.push({ ...x, userOpHash: null, logIndex: x.logIndex!, transactionHash: sim.tx.hash, blockNumber: n });
        }
      });
    }
    return out;
  };

  return Object.assign(range, { plainTransfers });
}
