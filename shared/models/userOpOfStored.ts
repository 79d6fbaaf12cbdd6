/**
 * The one mapping from a stored op (StoredUserOp, shared/db/tables/userOps/storedForm.ts) to the
 * spec's UserOp (userOp.ts) plus the fields real clients read: the API and the webhook payloads both
 * answer with it.
 */
import type { StoredUserOp } from '../db/tables/userOps/storedForm.js';
import { findNetworkByChainId } from '../networks.js';
import type { UserOp } from './userOp.js';
import { ZERO_ADDRESS } from '../chain/constants.js';

const sum = (values: Array<string | null>): string | null =>
  values.some((v) => v === null) ? null : values.reduce((acc, v) => acc + BigInt(v!), 0n).toString();

/** The spec's UserOp (plus the fields real clients read) from a stored op. */
export function toUserOp(op: StoredUserOp): UserOp {
  const first = op.calls[0];
  const chainId = Number(op.chain_id);
  const postOpReverted = op.failure === 'postop_reverted';
  const v06 = op.entry_point_version === 'v0.6';
  const gasLimits = [op.call_gas_limit, op.verification_gas_limit, op.pre_verification_gas];
  if (!v06) gasLimits.push(op.paymaster_verification_gas_limit ?? '0', op.paymaster_post_op_gas_limit ?? '0');
  const gasUsed = BigInt(op.actual_gas_used);
  return {
    userOpHash: op.user_op_hash,
    transactionHash: op.tx_hash,
    sender: op.sender,
    target: first?.target ?? null,
    accountSender: { factory: op.sender_factory },
    accountTarget: first ? { factory: op.target_factory } : null,
    paymaster: op.paymaster ?? ZERO_ADDRESS,
    nonce: op.nonce,
    actualGasCost: op.actual_gas_cost,
    actualGasUsed: op.actual_gas_used,
    success: op.success,
    revertReason: postOpReverted ? null : op.revert_reason,
    blockTime: op.block_time,
    blockNumber: op.block_number,
    network: findNetworkByChainId(chainId)?.name ?? String(chainId),
    input: op.input ?? '0x',
    // "call data sent to the target": the first decoded call's data, else the op's own callData.
    callData: first?.data ?? op.call_data ?? '0x',
    beneficiary: op.beneficiary,
    // The spec's samples answer `0x` for an op that deployed nothing.
    factory: op.factory ?? '0x',
    value: first?.value ?? null,
    verificationGasLimit: op.verification_gas_limit,
    preVerificationGas: op.pre_verification_gas,
    maxFeePerGas: op.max_fee_per_gas,
    maxPriorityFeePerGas: op.max_priority_fee_per_gas,
    paymasterAndData: op.paymaster_and_data,
    signature: op.signature,
    id: `${op.user_op_hash}-${op.log_index}`,
    // What the op paid per unit of gas.
    gasPrice: gasUsed > 0n ? (BigInt(op.actual_gas_cost) / gasUsed).toString() : null,
    gasLimit: sum(gasLimits),
    callGasLimit: op.call_gas_limit,
    baseFeePerGas: null,
    status: op.success ? 'SUCCESS' : 'FAILED',
    entryPoint: op.entry_point,
    entryPointVersion: op.entry_point_version,
    initCode: op.init_code,
    accountGasLimits: op.account_gas_limits,
    gasFees: op.gas_fees,
    preDecodedCallData: op.call_data ?? '0x',
    paymasterRevertReason: postOpReverted ? op.revert_reason : null,
    revertMessage: op.revert_message,
    bundler: op.bundler,
    chainId,
    bundleIndex: op.bundle_index,
    logIndex: op.log_index,
    targets: op.calls.map((c) => c.target),
    values: op.calls.map((c) => c.value),
    callDatas: op.calls.map((c) => c.data),
    eip7702: op.eip7702 || op.sender_eip7702 === true,
    paymasterSignature: op.paymaster_signature,
    implementation: op.sender_implementation,
  };
}
