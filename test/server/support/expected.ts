/**
 * What the API must answer, computed from the generator's ground truth alone (never from the
 * database), in the API's wire shapes.
 */
import type { GroundTruth, TruthUserOp } from '../../../devnet/index.js';
import { findNetworkByChainId } from '../../../shared/networks.js';
import { ZERO_ADDRESS } from '../../../shared/chain/constants.js';

/** Newest first, as every list answers. */
export const newestFirst = (a: TruthUserOp, b: TruthUserOp) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex;

/** The UserOp fields the truth determines. */
export function expectedUserOp(truth: GroundTruth, op: TruthUserOp): Record<string, unknown> {
  const first = op.calls[0];
  const senderAccount = truth.accounts.find((a) => a.address === op.sender);
  return {
    userOpHash: op.userOpHash,
    transactionHash: op.transactionHash,
    sender: op.sender,
    nonce: op.nonce,
    success: op.success,
    status: op.success ? 'SUCCESS' : 'FAILED',
    actualGasCost: op.actualGasCost,
    actualGasUsed: op.actualGasUsed,
    revertReason: op.revertReason,
    blockNumber: String(op.blockNumber),
    blockTime: String(op.blockTime),
    network: findNetworkByChainId(truth.chainId)!.name,
    chainId: truth.chainId,
    paymaster: op.paymaster ?? ZERO_ADDRESS,
    factory: op.factory ?? '0x',
    accountSender: { factory: senderAccount?.factory ?? null },
    accountTarget: first ? { factory: truth.accounts.find((a) => a.address === first.target)?.factory ?? null } : null,
    beneficiary: op.beneficiary,
    bundler: op.bundler,
    entryPoint: op.entryPoint,
    entryPointVersion: op.entryPointVersion,
    bundleIndex: op.bundleIndex,
    logIndex: op.logIndex,
    target: first?.target ?? null,
    value: first?.value ?? null,
    callData: first?.data ?? op.callData,
    preDecodedCallData: op.callData,
    targets: op.calls.map((c) => c.target),
    values: op.calls.map((c) => c.value),
    callDatas: op.calls.map((c) => c.data),
    initCode: op.initCode,
    signature: op.signature,
    paymasterAndData: op.paymasterAndData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    id: `${op.userOpHash}-${op.logIndex}`,
  };
}

/** Keeps only the keys `expected` names, to compare an answer with deep equality. */
export function pick(actual: Record<string, unknown>, expected: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(expected).map((k) => [k, actual[k]]));
}

export const sumOf = (values: string[]) => values.reduce((acc, v) => acc + BigInt(v), 0n).toString();
