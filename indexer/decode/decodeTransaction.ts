/**
 * Decodes one bundle transaction. Ops come from their UserOperationEvents first (bundleLogs), so
 * calldata can add fields but never lose an op; calldata comes from tx.input when the transaction
 * called one EntryPoint directly, otherwise from inside tx.input when the ops' hashes prove it
 * (embeddedBundles) or from the trace's handleOps frames. Calldata ops are
 * matched to events by (EntryPoint, sender, nonce), never by position or nonce alone.
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import type { TraceMode } from '../tuning.js';
import { decodeAccountCalls } from '../../shared/calldata/accountCalls.js';
import { feeShares } from './bundleFees.js';
import { splitBundles, type LogBundle, type LogOp } from './bundleLogs.js';
import { bundlesFromInput } from './embeddedBundles.js';
import { opExecutionFrames, tracedBundleCalls, type TracedBundleCall } from './callFrames.js';
import { hexToNumber, type CallFrame, type RawBundleTx, type RpcReceipt, type RpcTransaction } from './chainTypes.js';
import type {
  DecodeStatus,
  DecodedAddressTx,
  DecodedBundle,
  DecodedBundleTx,
  DecodedModuleEvent,
  DecodedTrace,
  DecodedTransfer,
  DecodedUserOp,
} from './decodedBatch.js';
import { decoderFor, type CalldataOp, type HandleOpsCall } from './entryPointDecoder.js';
import { decodeRevertMessage } from './revertReason.js';
import { delegatedAuthorities, hasEip7702InitCode } from './eip7702.js';
import { transfersOf } from './transfers.js';
import { moduleEventsOf } from './moduleEvents.js';
import { logOwners, type TransactionLog } from '../../shared/db/tables/logs.js';
import { receiptRest } from '../../shared/db/tables/bundleTransactions.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

export type DecodedTx = {
  bundleTx: DecodedBundleTx;
  bundles: DecodedBundle[];
  userOps: DecodedUserOp[];
  transfers: DecodedTransfer[];
  traces: DecodedTrace[];
  addressTxs: DecodedAddressTx[];
  moduleEvents: DecodedModuleEvent[];
};

export type DecodeContext = {
  chainId: number;
  entryPoints: Map<string, EntryPointVersion>;
  /**
   * INDEXER_TRACES. all: a trace row for every op (`unavailable` where the node gave none); needed:
   * rows only for the ops of transactions traced anyway (the web process traces the rest on
   * request); off: no trace rows.
   */
  traces: TraceMode;
};

type Calldata = { calls: TracedBundleCall[]; status: DecodeStatus };

/**
 * The handleOps calls of the transaction, and what to record when there are none. With a trace:
 * tx.input when it calls an EntryPoint directly, plus every live handleOps frame of the trace
 * (wrappers, multicalls, bundles nested in an op's execution). Without one: tx.input when it is
 * the transaction's one bundle; else the bundles found inside tx.input and proven by their ops'
 * hashes (embeddedBundles.ts), or tx.input's own bundle when not all of them are.
 */
function bundleCalls(raw: RawBundleTx, logBundles: LogBundle[], ctx: DecodeContext): Calldata {
  const to = raw.tx.to?.toLowerCase();
  const version = to ? ctx.entryPoints.get(to) : undefined;
  const calls: TracedBundleCall[] = [];
  try {
    const embedded =
      raw.trace || !needsTrace(raw.receipt, logBundles, ctx.entryPoints) ? null : bundlesFromInput(raw.tx.input, logBundles, ctx.chainId);
    if (embedded) calls.push(...embedded);
    else if (to && version) {
      const direct = decoderFor(version).decodeHandleOps(raw.tx.input);
      if (direct) calls.push({ entryPoint: to, call: direct, fromTxInput: true });
    }
    if (raw.trace) calls.push(...tracedBundleCalls(raw.trace, ctx.entryPoints));
  } catch {
    return { calls, status: 'decode_failed' };
  }
  if (calls.length > 0) return { calls, status: 'ok' };
  return { calls, status: raw.trace ? 'calldata_missing' : 'trace_needed' };
}

/** Whether the transaction's calldata cannot be read from tx.input alone (indirect or multi-bundle). */
function needsTrace(receipt: RpcReceipt, logBundles: LogBundle[], entryPoints: Map<string, EntryPointVersion>): boolean {
  const to = receipt.to?.toLowerCase();
  return !to || !entryPoints.has(to) || logBundles.length !== 1;
}

/**
 * Whether this transaction's calldata can only be recovered from a trace: it is not one bundle
 * sent straight to an EntryPoint, and its bundles are not all found inside tx.input either.
 */
export function traceNeeded(
  receipt: RpcReceipt,
  tx: RpcTransaction,
  { entryPoints, chainId }: Pick<DecodeContext, 'entryPoints' | 'chainId'>,
): boolean {
  const logBundles = splitBundles(receipt.logs, entryPoints);
  return needsTrace(receipt, logBundles, entryPoints) && bundlesFromInput(tx.input, logBundles, chainId) === null;
}

type Match = { op: CalldataOp; call: HandleOpsCall; fromTxInput: boolean };

function matchIndex(calls: TracedBundleCall[]): Map<string, Match> {
  const index = new Map<string, Match>();
  for (const { entryPoint, call, fromTxInput } of calls) {
    for (const op of call.ops) {
      const key = `${entryPoint}:${op.sender}:${op.nonce}`;
      // A trace repeats tx.input's own call as its top frame: the op keeps its offset in tx.input.
      if (index.get(key)?.fromTxInput) continue;
      index.set(key, { op, call, fromTxInput: fromTxInput === true });
    }
  }
  return index;
}

function toUserOp(e: LogOp, match: Match | undefined, status: DecodeStatus, raw: RawBundleTx): DecodedUserOp {
  const c = match?.op;
  const receipt = raw.receipt;
  const calls = c ? decodeAccountCalls(c.callData, e.sender) : [];
  return {
    userOpHash: e.userOpHash,
    entryPoint: e.entryPoint,
    entryPointVersion: e.version,
    sender: e.sender,
    paymaster: e.paymaster,
    nonce: e.nonce,
    success: e.success,
    actualGasCost: e.actualGasCost,
    actualGasUsed: e.actualGasUsed,
    failure: e.failure,
    revertReason: e.revertReason,
    revertMessage: decodeRevertMessage(e.revertReason),
    blockNumber: hexToNumber(receipt.blockNumber),
    blockHash: receipt.blockHash.toLowerCase(),
    blockTime: raw.blockTime,
    txHash: receipt.transactionHash.toLowerCase(),
    txIndex: hexToNumber(receipt.transactionIndex),
    bundleIndex: e.bundleIndex,
    opIndex: c?.opIndex ?? null,
    // The struct's offset in tx.input (after the 4-byte selector) when the op was read from it.
    opAt: c && match?.fromTxInput ? c.structAt + 4 : null,
    logIndex: e.logIndex,
    execLogFrom: e.execLogFrom,
    execLogTo: e.execLogTo,
    bundler: receipt.from.toLowerCase(),
    beneficiary: match?.call.beneficiary ?? null,
    factory: e.deployment?.factory ?? null,
    deployedLogIndex: e.deployment?.logIndex ?? null,
    aggregator: e.aggregator ?? c?.aggregator ?? null,
    initCode: c?.initCode ?? null,
    callData: c?.callData ?? null,
    signature: c?.signature ?? null,
    paymasterAndData: c?.paymasterAndData ?? null,
    callGasLimit: c?.callGasLimit ?? null,
    verificationGasLimit: c?.verificationGasLimit ?? null,
    preVerificationGas: c?.preVerificationGas ?? null,
    maxFeePerGas: c?.maxFeePerGas ?? null,
    maxPriorityFeePerGas: c?.maxPriorityFeePerGas ?? null,
    paymasterVerificationGasLimit: c?.paymasterVerificationGasLimit ?? null,
    paymasterPostOpGasLimit: c?.paymasterPostOpGasLimit ?? null,
    accountGasLimits: c?.accountGasLimits ?? null,
    gasFees: c?.gasFees ?? null,
    decodeStatus: c ? 'ok' : status === 'ok' ? 'calldata_missing' : status,
    calls,
    target: calls[0]?.target ?? null,
    // Authorizations in the transaction are added by decodeTransaction.
    eip7702: e.eip7702Initialized || hasEip7702InitCode(e.version, c?.initCode ?? null),
    paymasterSignature: c?.paymasterSignature ?? null,
  };
}

/**
 * The fee is what the sender paid. On OP-stack chains that is the L2 execution fee plus the L1
 * data fee the receipt reports (`l1Fee`), as Etherscan's and Blockscout's "Transaction Fee" show
 * it; the L1 part is also kept on its own (`l1Fee`), as they show it beside. (Arbitrum folds its L1
 * cost into gasUsed, so nothing is added there.)
 */
function toBundleTx(raw: RawBundleTx): DecodedBundleTx {
  const r = raw.receipt;
  const gasUsed = BigInt(r.gasUsed);
  const effectiveGasPrice = BigInt(r.effectiveGasPrice);
  const l1Fee = r.l1Fee === undefined || r.l1Fee === null ? null : BigInt(r.l1Fee);
  return {
    txHash: r.transactionHash.toLowerCase(),
    blockNumber: hexToNumber(r.blockNumber),
    blockHash: r.blockHash.toLowerCase(),
    blockTime: raw.blockTime,
    txIndex: hexToNumber(r.transactionIndex),
    from: r.from.toLowerCase(),
    to: r.to?.toLowerCase() ?? null,
    input: raw.tx.input.toLowerCase(),
    status: BigInt(r.status) === 1n,
    gasUsed,
    effectiveGasPrice,
    fee: gasUsed * effectiveGasPrice + (l1Fee ?? 0n),
    l1Fee,
    ...receiptLogs(r),
    cumulativeGasUsed: r.cumulativeGasUsed === undefined ? null : BigInt(r.cumulativeGasUsed),
    type: r.type === undefined ? null : hexToNumber(r.type),
    receiptRest: receiptRest(r),
  };
}

/**
 * The receipt's logs as stored with the transaction: by the block-level index of the first, the
 * others following it (a transaction's logs are contiguous in its block, which the stored form
 * relies on: a receipt that breaks it is refused rather than answered wrong).
 */
function receiptLogs(receipt: RpcReceipt): { firstLogIndex: number; logs: TransactionLog[] } {
  const firstLogIndex = receipt.logs[0] ? hexToNumber(receipt.logs[0].logIndex) : 0;
  const logs = receipt.logs.map((l, i) => {
    if (hexToNumber(l.logIndex) !== firstLogIndex + i) {
      throw new Error(`the logs of transaction ${receipt.transactionHash} are not numbered in sequence (log ${i} has index ${l.logIndex})`);
    }
    return { address: l.address.toLowerCase(), topics: l.topics.map((t) => t.toLowerCase()), data: l.data.toLowerCase() };
  });
  return { firstLogIndex, logs };
}

export function decodeTransaction(raw: RawBundleTx, ctx: DecodeContext): DecodedTx {
  const bundleTx = toBundleTx(raw);
  const logBundles = splitBundles(raw.receipt.logs, ctx.entryPoints);
  const calldata = bundleCalls(raw, logBundles, ctx);
  const matches = matchIndex(calldata.calls);

  const userOps: DecodedUserOp[] = [];
  const unshared = logBundles.map((b) => {
    const ops = b.ops.map((e) => toUserOp(e, matches.get(`${e.entryPoint}:${e.sender}:${e.nonce}`), calldata.status, raw));
    userOps.push(...ops);
    return {
      txHash: bundleTx.txHash,
      bundleIndex: b.bundleIndex,
      blockNumber: bundleTx.blockNumber,
      blockTime: bundleTx.blockTime,
      entryPoint: b.entryPoint,
      entryPointVersion: b.version,
      bundler: bundleTx.from,
      beneficiary: ops.find((o) => o.beneficiary)?.beneficiary ?? null,
      aggregated: b.aggregated || ops.some((o) => o.aggregator !== null),
      opsCount: ops.length,
      opsFailed: ops.filter((o) => !o.success).length,
      actualGasCostSum: ops.reduce((sum, o) => sum + o.actualGasCost, 0n),
    };
  });
  const shares = feeShares(
    bundleTx.fee,
    unshared.map((b) => b.actualGasCostSum),
  );
  const bundles: DecodedBundle[] = unshared.map((b, i) => ({ ...b, feeShare: shares[i]! }));

  const delegated = delegatedAuthorities(raw.tx, ctx.chainId);
  for (const op of userOps) op.eip7702 ||= delegated.has(op.sender);

  const transfers = collectTransfers(raw, bundleTx, userOps);
  return {
    bundleTx,
    bundles,
    userOps,
    transfers,
    traces: ctx.traces === 'off' ? [] : opTraces(raw, userOps, ctx),
    addressTxs: addressTransactions(bundleTx, userOps, transfers),
    moduleEvents: moduleEventsOf(raw.receipt.logs, bundleTx, userOps),
  };
}

/** The transaction's token transfers, each with the op its log belongs to, and its ops' native value transfers. */
function collectTransfers(raw: RawBundleTx, tx: DecodedBundleTx, userOps: DecodedUserOp[]): DecodedTransfer[] {
  const owners = logOwners(userOps, tx.firstLogIndex, tx.logs.length);
  const base = { txHash: tx.txHash, blockNumber: tx.blockNumber, blockTime: tx.blockTime };
  const transfers: DecodedTransfer[] = raw.receipt.logs.flatMap((log) =>
    transfersOf(log).map((t) => ({ ...base, ...t, userOpHash: owners[t.logIndex - tx.firstLogIndex] ?? null })),
  );
  // Native value leaves the account only when the op's execution succeeded.
  for (const op of userOps) {
    if (!op.success) continue;
    op.calls.forEach((call, i) => {
      if (call.value === 0n) return;
      transfers.push({
        ...base,
        logIndex: -1 - op.logIndex,
        batchIndex: i,
        userOpHash: op.userOpHash,
        standard: 'NATIVE',
        token: null,
        from: op.sender,
        to: call.target,
        value: call.value,
        tokenId: null,
      });
    });
  }
  return transfers;
}

function opTraces(raw: RawBundleTx, userOps: DecodedUserOp[], ctx: DecodeContext): DecodedTrace[] {
  const frames = raw.trace ? opExecutionFrames(raw.trace, ctx.entryPoints) : new Map<string, CallFrame>();
  const traces: DecodedTrace[] = [];
  for (const op of userOps) {
    const frame = frames.get(op.userOpHash);
    if (frame) traces.push({ userOpHash: op.userOpHash, status: 'ok', trace: frame });
    else if (ctx.traces === 'all') traces.push({ userOpHash: op.userOpHash, status: 'unavailable', trace: null });
  }
  return traces;
}

/**
 * Who took part in the transaction, as address_transactions rows: call targets and transfer
 * parties, but only those no index of the op and transfer rows finds. Its ops' senders, bundler
 * (the transaction's sender) and first call targets (user_ops_sender, user_ops_bundler,
 * user_ops_target) and its token transfers' parties (token_transfers_from, token_transfers_to) are
 * not repeated there: listByAddress reads those indexes too. A transaction without ops keeps its
 * sender's row.
 */
function addressTransactions(tx: DecodedBundleTx, userOps: DecodedUserOp[], transfers: DecodedTransfer[]): DecodedAddressTx[] {
  const addresses = new Set<string>([tx.from]);
  for (const op of userOps) for (const call of op.calls) addresses.add(call.target);
  for (const t of transfers) {
    addresses.add(t.from);
    addresses.add(t.to);
  }
  addresses.delete(ZERO_ADDRESS);
  for (const op of userOps) {
    addresses.delete(op.sender);
    addresses.delete(op.bundler);
    if (op.target !== null) addresses.delete(op.target);
  }
  // Token transfers are stored (token_transfers); an op's native value transfers are not.
  for (const t of transfers) {
    if (t.standard === 'NATIVE') continue;
    addresses.delete(t.from);
    addresses.delete(t.to);
  }
  return [...addresses].map((address) => ({ address, blockNumber: tx.blockNumber, txIndex: tx.txIndex }));
}
