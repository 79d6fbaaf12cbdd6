/**
 * v0.7+ EntryPoint calldata (v0.7, v0.8, v0.9): `PackedUserOperation`, unpacked the right way
 * round. accountGasLimits = verificationGasLimit (high 128 bits) ‖ callGasLimit (low 128);
 * gasFees = maxPriorityFeePerGas (high) ‖ maxFeePerGas (low) — blockscout stores the fee pair
 * flipped; the userOpHash check in the tests guards against that.
 * paymasterAndData = paymaster(20) ‖ verificationGasLimit(16) ‖ postOpGasLimit(16) ‖ data.
 * @see research/indexer.md §1.4
 */
import { SELECTORS } from './abi.js';
import type { CalldataOp, EntryPointDecoder, HandleOpsCall } from './entryPointDecoder.js';
import { readBundleCall } from './handleOpsLayout.js';
import { argumentsOf, type HexReader } from '../../shared/calldata/hexAbi.js';

const LOW_128 = (1n << 128n) - 1n;

/** [high 128 bits, low 128 bits] of a bytes32. */
export function unpackUint128Pair(word: string): [bigint, bigint] {
  const value = BigInt(word);
  return [value >> 128n, value & LOW_128];
}

/** The paymaster's own gas limits inside v0.7+ paymasterAndData (null when shorter than 52 bytes). */
export function paymasterGasLimits(paymasterAndData: string): { verification: bigint; postOp: bigint } | null {
  const hex = paymasterAndData.slice(2);
  if (hex.length < 104) return null;
  return { verification: BigInt(`0x${hex.slice(40, 72)}`), postOp: BigInt(`0x${hex.slice(72, 104)}`) };
}

/** PackedUserOperation at byte `p`: 9 head words, offsets of its bytes fields relative to `p`. */
function readOp(r: HexReader, p: number, aggregator: string | null, opIndex: number): CalldataOp {
  const accountGasLimits = r.bytes32(p + 128);
  const gasFees = r.bytes32(p + 192);
  const [verificationGasLimit, callGasLimit] = unpackUint128Pair(accountGasLimits);
  const [maxPriorityFeePerGas, maxFeePerGas] = unpackUint128Pair(gasFees);
  const paymasterAndData = r.bytes(p, p + 224);
  const pmGas = paymasterGasLimits(paymasterAndData);
  return {
    sender: r.address(p),
    nonce: r.uint(p + 32),
    initCode: r.bytes(p, p + 64),
    callData: r.bytes(p, p + 96),
    callGasLimit,
    verificationGasLimit,
    preVerificationGas: r.uint(p + 160),
    maxFeePerGas,
    maxPriorityFeePerGas,
    paymasterAndData,
    signature: r.bytes(p, p + 256),
    paymasterVerificationGasLimit: pmGas?.verification ?? null,
    paymasterPostOpGasLimit: pmGas?.postOp ?? null,
    accountGasLimits,
    gasFees,
    aggregator,
    opIndex,
  };
}

export const entryPointV07: EntryPointDecoder = {
  bundleSelectors: [SELECTORS.handleOpsV07, SELECTORS.handleAggregatedOpsV07],
  innerHandleOpSelector: SELECTORS.innerHandleOpV07,

  decodeHandleOps(input: string): HandleOpsCall | null {
    const selector = input.slice(0, 10).toLowerCase();
    if (selector === SELECTORS.handleOpsV07) return readBundleCall(input, false, readOp);
    if (selector === SELECTORS.handleAggregatedOpsV07) return readBundleCall(input, true, readOp);
    return null;
  },

  /** As v0.6, after the 10-word v0.7 MemoryUserOp. */
  innerHandleOpHash(input: string): string | null {
    if (input.slice(0, 10).toLowerCase() !== SELECTORS.innerHandleOpV07) return null;
    return argumentsOf(input).bytes32(32 * (1 + 10));
  },
};
