import type { UserOp } from '../../shared/models/index.js';
import type { BundlerDetails } from '../../shared/models/index.js';

/** A user operation as the spec's BundlerDetails lists it (the fields of its bundler sample). */
export function toBundlerUserOp(op: UserOp): BundlerDetails['userOps'][number] {
  return {
    id: op.id,
    sender: op.sender,
    target: op.target,
    actualGasCost: op.actualGasCost,
    success: op.success,
    revertReason: op.revertReason,
    blockTime: op.blockTime,
    paymaster: op.paymaster,
    network: op.network,
    userOpHash: op.userOpHash,
    input: op.input,
    nonce: op.nonce,
    value: op.value,
    callData: op.callData,
  };
}
