/**
 * The ground truth: a record of every user operation the devnet put on chain and what happened to
 * it, for an independent indexer to reproduce. Addresses and hashes are lower-case hex, big
 * numbers decimal strings, block numbers and times numbers.
 */
import type { EntryPointVersion } from '../shared/networks.js';
import type { EpVersion } from './userop.js';

export type TruthUserOp = {
  userOpHash: string;
  sender: string;
  nonce: string;
  entryPoint: string;
  /** v0.9 only on the realistic devnet (devnet/realistic), whose bundlers run it. */
  entryPointVersion: EntryPointVersion;
  /** null when the op had no paymaster. */
  paymaster: string | null;
  /** The factory from initCode, only on the op that deployed the account (AccountDeployed). */
  factory: string | null;
  success: boolean;
  /** Raw revert bytes from UserOperationRevertReason; null when the EntryPoint emitted none. */
  revertReason: string | null;
  actualGasCost: string;
  actualGasUsed: string;
  transactionHash: string;
  blockNumber: number;
  blockTime: number;
  /** Index of the op's bundle within its transaction (0 unless the tx carried several bundles). */
  bundleIndex: number;
  /** Block-level log index of the op's UserOperationEvent. */
  logIndex: number;
  /** tx.from of the bundle transaction. */
  bundler: string;
  beneficiary: string;
  callData: string;
  initCode: string;
  paymasterAndData: string;
  signature: string;
  callGasLimit: string;
  verificationGasLimit: string;
  preVerificationGas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  /** The execute/executeBatch calls encoded in callData, in order (batch without values → "0"). */
  calls: Array<{ target: string; value: string; data: string }>;
};

export type TruthBundle = {
  transactionHash: string;
  bundleIndex: number;
  blockNumber: number;
  blockTime: number;
  bundler: string;
  beneficiary: string;
  entryPoint: string;
  userOpHashes: string[];
  success: boolean;
  /** gasUsed × effectiveGasPrice of the whole transaction (each bundle of a multi-bundle tx repeats it). */
  transactionFee: string;
};

export type TruthAccount = {
  address: string;
  factory: string;
  userOpHash: string;
  transactionHash: string;
  blockNumber: number;
  blockTime: number;
};

export type TruthTransfer = {
  userOpHash: string;
  standard: 'ERC20' | 'ERC721' | 'ERC1155' | 'NATIVE';
  /** null for NATIVE. */
  token: string | null;
  from: string;
  to: string;
  /** Amount; "1" for ERC-721. */
  value: string;
  /** null for ERC20 and NATIVE. */
  tokenId: string | null;
  transactionHash: string;
  /** Block-level log index of the Transfer/TransferSingle log; null for NATIVE (no log). */
  logIndex: number | null;
};

/**
 * A token transfer of a plain transaction, no user op in it (the devnet's setup: each new
 * account's ERC-20 funding by mintBatch). Indexed under INDEXER_TRANSFERS=known when a party is an
 * address opscan knows (knownPlainTransfers).
 */
export type TruthPlainTransfer = Omit<TruthTransfer, 'userOpHash' | 'logIndex'> & {
  userOpHash: null;
  logIndex: number;
  blockNumber: number;
};

export type TruthDay = {
  /** floor(blockTime / 86400) */
  day: number;
  userOps: number;
  bundles: number;
  walletsCreated: number;
  gasCostCollected: string;
  /** Distinct senders with an op that day, sorted. */
  activeWallets: string[];
};

export type GroundTruth = {
  chainId: number;
  entryPoints: Record<EpVersion, string> & Partial<Record<'v0.9', string>>;
  contracts: Record<string, string>;
  userOps: TruthUserOp[];
  bundles: TruthBundle[];
  accounts: TruthAccount[];
  transfers: TruthTransfer[];
  /** Token transfers of plain transactions, in chain order (whoever the parties are). */
  plainTransfers: TruthPlainTransfer[];
  days: TruthDay[];
  /** Bundle transactions whose handleOps calldata is not in their input (BundleMulticall.aggregateMasked): only a trace shows it. */
  calldataOnlyInTraces: string[];
};

export function emptyTruth(chainId: number, entryPoints: Record<EpVersion, string>, contracts: Record<string, string>): GroundTruth {
  return {
    chainId,
    entryPoints,
    contracts,
    userOps: [],
    bundles: [],
    accounts: [],
    transfers: [],
    plainTransfers: [],
    days: [],
    calldataOnlyInTraces: [],
  };
}

/** Per-day metrics, derived from the other lists (recomputed whenever they change). */
export function computeDays(t: Pick<GroundTruth, 'userOps' | 'bundles' | 'accounts'>): TruthDay[] {
  type Acc = { userOps: number; bundles: number; walletsCreated: number; gas: bigint; senders: Set<string> };
  const days = new Map<number, Acc>();
  const at = (blockTime: number): Acc => {
    const day = Math.floor(blockTime / 86400);
    let d = days.get(day);
    if (!d) days.set(day, (d = { userOps: 0, bundles: 0, walletsCreated: 0, gas: 0n, senders: new Set() }));
    return d;
  };
  for (const op of t.userOps) {
    const d = at(op.blockTime);
    d.userOps++;
    d.gas += BigInt(op.actualGasCost);
    d.senders.add(op.sender);
  }
  for (const b of t.bundles) at(b.blockTime).bundles++;
  for (const a of t.accounts) at(a.blockTime).walletsCreated++;
  return [...days.entries()]
    .sort(([a], [b]) => a - b)
    .map(([day, d]) => ({
      day,
      userOps: d.userOps,
      bundles: d.bundles,
      walletsCreated: d.walletsCreated,
      gasCostCollected: d.gas.toString(),
      activeWallets: [...d.senders].sort(),
    }));
}

/** Drops everything recorded above `blockNumber` (a reorg removed those blocks). */
export function truncateTruth(t: GroundTruth, blockNumber: number): void {
  t.userOps = t.userOps.filter((o) => o.blockNumber <= blockNumber);
  t.bundles = t.bundles.filter((b) => b.blockNumber <= blockNumber);
  t.accounts = t.accounts.filter((a) => a.blockNumber <= blockNumber);
  const kept = new Set(t.userOps.map((o) => o.transactionHash));
  t.transfers = t.transfers.filter((x) => kept.has(x.transactionHash));
  t.plainTransfers = t.plainTransfers.filter((x) => x.blockNumber <= blockNumber);
  t.days = computeDays(t);
}

/** The addresses opscan knows from the ops: senders, paymasters, factories and bundlers. */
export function knownAddresses(t: Pick<GroundTruth, 'userOps'>): Set<string> {
  const known = new Set<string>();
  for (const o of t.userOps) for (const a of [o.sender, o.paymaster, o.factory, o.bundler]) if (a) known.add(a);
  return known;
}

/** The plain transactions' transfers an INDEXER_TRANSFERS=known indexer stores: those with a known party. */
export function knownPlainTransfers(t: Pick<GroundTruth, 'userOps' | 'plainTransfers'>): TruthPlainTransfer[] {
  const known = knownAddresses(t);
  return t.plainTransfers.filter((x) => known.has(x.from) || known.has(x.to));
}

/** An op's packed fields as the truth records them (calldata and signature as sent, gas limits and fees in decimal). */
export function truthOpFields(op: {
  callData: string;
  initCode: string;
  paymasterAndData: string;
  signature: string;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}): Pick<
  TruthUserOp,
  | 'callData'
  | 'initCode'
  | 'paymasterAndData'
  | 'signature'
  | 'callGasLimit'
  | 'verificationGasLimit'
  | 'preVerificationGas'
  | 'maxFeePerGas'
  | 'maxPriorityFeePerGas'
> {
  return {
    callData: op.callData,
    initCode: op.initCode,
    paymasterAndData: op.paymasterAndData,
    signature: op.signature,
    callGasLimit: op.callGasLimit.toString(),
    verificationGasLimit: op.verificationGasLimit.toString(),
    preVerificationGas: op.preVerificationGas.toString(),
    maxFeePerGas: op.maxFeePerGas.toString(),
    maxPriorityFeePerGas: op.maxPriorityFeePerGas.toString(),
  };
}
