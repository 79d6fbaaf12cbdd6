/**
 * Decoding of EntryPoint calldata, one strategy per struct family: v0.6 (`UserOperation`) and
 * v0.7+ (`PackedUserOperation`, shared by v0.7, v0.8 and v0.9; v0.9 also splits off the paymaster
 * signature). The strategy is chosen by the EntryPoint's configured version, i.e. by address.
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import { entryPointV06 } from './entryPointV06.js';
import { entryPointV07, entryPointV09 } from './entryPointV07.js';

/** One op as handleOps calldata carries it, unpacked to the v0.6 field names for every version. */
export type CalldataOp = {
  sender: string;
  nonce: bigint;
  initCode: string;
  callData: string;
  paymasterAndData: string;
  signature: string;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** v0.7+: from paymasterAndData[20:36] and [36:52]; null for v0.6 or without a paymaster. */
  paymasterVerificationGasLimit: bigint | null;
  paymasterPostOpGasLimit: bigint | null;
  /** v0.9: the paymaster signature suffix of paymasterAndData (null before v0.9 or without one). */
  paymasterSignature: string | null;
  /** v0.7+ packed originals (null for v0.6). */
  accountGasLimits: string | null;
  gasFees: string | null;
  /** handleAggregatedOps: the op's group aggregator (null for handleOps). */
  aggregator: string | null;
  /** Position in the bundle, counted across aggregator groups. */
  opIndex: number;
  /** Byte offset of the op's struct in the decoded call's arguments (its selector not counted). */
  structAt: number;
};

/** A decoded handleOps / handleAggregatedOps call. */
export type HandleOpsCall = { beneficiary: string; aggregated: boolean; ops: CalldataOp[] };

export type EntryPointDecoder = {
  /** Selectors of handleOps and handleAggregatedOps for this family. */
  readonly bundleSelectors: readonly string[];
  readonly innerHandleOpSelector: string;
  /** null when `input` is not a bundle call of this family. Throws on malformed calldata. */
  decodeHandleOps(input: string): HandleOpsCall | null;
  /** The userOpHash inside an innerHandleOp call (the EntryPoint's self-call executing one op). */
  innerHandleOpHash(input: string): string | null;
};

export function decoderFor(version: EntryPointVersion): EntryPointDecoder {
  if (version === 'v0.6') return entryPointV06;
  return version === 'v0.9' ? entryPointV09 : entryPointV07;
}
