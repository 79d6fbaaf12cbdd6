/**
 * v0.7+ EntryPoint calldata (v0.7, v0.8, v0.9): `PackedUserOperation`, unpacked the right way
 * round. accountGasLimits = verificationGasLimit (high 128 bits) ‖ callGasLimit (low 128);
 * gasFees = maxPriorityFeePerGas (high) ‖ maxFeePerGas (low) — blockscout stores the fee pair
 * flipped; the userOpHash check in the tests guards against that.
 * paymasterAndData = paymaster(20) ‖ verificationGasLimit(16) ‖ postOpGasLimit(16) ‖ data.
 * @see research/indexer.md §1.4
 */
import type { Result } from 'ethers';
import { ENTRY_POINT_V07, SELECTORS } from './abi.js';
import type { CalldataOp, EntryPointDecoder, HandleOpsCall } from './entryPointDecoder.js';

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

function toOp(s: Result, aggregator: string | null, opIndex: number): CalldataOp {
  const accountGasLimits = String(s[4]);
  const gasFees = String(s[6]);
  const [verificationGasLimit, callGasLimit] = unpackUint128Pair(accountGasLimits);
  const [maxPriorityFeePerGas, maxFeePerGas] = unpackUint128Pair(gasFees);
  const paymasterAndData = String(s[7]);
  const pmGas = paymasterGasLimits(paymasterAndData);
  return {
    sender: String(s[0]).toLowerCase(),
    nonce: s[1] as bigint,
    initCode: String(s[2]),
    callData: String(s[3]),
    callGasLimit,
    verificationGasLimit,
    preVerificationGas: s[5] as bigint,
    maxFeePerGas,
    maxPriorityFeePerGas,
    paymasterAndData,
    signature: String(s[8]),
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
    if (selector === SELECTORS.handleOpsV07) {
      const [ops, beneficiary] = ENTRY_POINT_V07.decodeFunctionData('handleOps', input);
      return {
        beneficiary: String(beneficiary).toLowerCase(),
        aggregated: false,
        ops: (ops as Result[]).map((s, i) => toOp(s, null, i)),
      };
    }
    if (selector === SELECTORS.handleAggregatedOpsV07) {
      const [groups, beneficiary] = ENTRY_POINT_V07.decodeFunctionData('handleAggregatedOps', input);
      const ops: CalldataOp[] = [];
      for (const group of groups as Result[]) {
        const aggregator = String(group[1]).toLowerCase();
        for (const s of group[0] as Result[]) ops.push(toOp(s, aggregator, ops.length));
      }
      return { beneficiary: String(beneficiary).toLowerCase(), aggregated: true, ops };
    }
    return null;
  },

  innerHandleOpHash(input: string): string | null {
    if (input.slice(0, 10).toLowerCase() !== SELECTORS.innerHandleOpV07) return null;
    const [, opInfo] = ENTRY_POINT_V07.decodeFunctionData('innerHandleOp', input);
    return String((opInfo as Result)[1]).toLowerCase();
  },
};
