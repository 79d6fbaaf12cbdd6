/**
 * v0.7+ EntryPoint calldata (v0.7, v0.8, v0.9): `PackedUserOperation`, unpacked the right way
 * round. accountGasLimits = verificationGasLimit (high 128 bits) ‖ callGasLimit (low 128);
 * gasFees = maxPriorityFeePerGas (high) ‖ maxFeePerGas (low) — blockscout stores the fee pair
 * flipped; the userOpHash check in the tests guards against that.
 * paymasterAndData = paymaster(20) ‖ verificationGasLimit(16) ‖ postOpGasLimit(16) ‖ data; v0.9
 * may append paymasterSignature ‖ uint16 length ‖ magic (see paymasterSignatureOf).
 */
import { SELECTORS } from './abi.js';
import type { CalldataOp, EntryPointDecoder, HandleOpsCall } from './entryPointDecoder.js';
import { readBundleCall, type OpReader } from './handleOpsLayout.js';
import { argumentsOf, type HexReader } from '../../shared/calldata/hexAbi.js';
import { readOpInputFields } from '../../shared/calldata/userOpLayout.js';

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

/** keccak("PaymasterSignature")[:8]: marks a v0.9 paymaster signature at the end of paymasterAndData. */
export const PAYMASTER_SIG_MAGIC = '0x22e325a297439656';
/** 52 bytes of paymaster and gas limits, then at least the 2-byte length and the 8-byte magic. */
const MIN_LENGTH_WITH_SIGNATURE = 52 + 10;

/**
 * The paymaster signature a v0.9 paymasterAndData ends with, as the EntryPoint reads it
 * (UserOperationLib.getPaymasterSignatureLength): magic last, the signature's uint16 length before
 * it, the signature before that. The userOpHash covers paymasterAndData without signature and
 * length (magic kept), so a paymaster can sign in parallel with the account. A length reaching
 * into the first 52 bytes makes the EntryPoint revert (such an op is never on chain): null here.
 */
export function paymasterSignatureOf(paymasterAndData: string): string | null {
  const hex = paymasterAndData.slice(2).toLowerCase();
  const bytes = hex.length / 2;
  if (bytes < MIN_LENGTH_WITH_SIGNATURE || !hex.endsWith(PAYMASTER_SIG_MAGIC.slice(2))) return null;
  const length = Number.parseInt(hex.slice(-20, -16), 16);
  if (length === 0 || length > bytes - MIN_LENGTH_WITH_SIGNATURE) return null;
  return `0x${hex.slice(hex.length - 20 - 2 * length, hex.length - 20)}`;
}

/** PackedUserOperation at byte `p`: 9 head words, offsets of its bytes fields relative to `p` (userOpLayout.ts). */
function readOp(r: HexReader, p: number, aggregator: string | null, opIndex: number): CalldataOp {
  const fields = readOpInputFields(r, p, false);
  const [verificationGasLimit, callGasLimit] = unpackUint128Pair(fields.accountGasLimits!);
  const [maxPriorityFeePerGas, maxFeePerGas] = unpackUint128Pair(fields.gasFees!);
  const pmGas = paymasterGasLimits(fields.paymasterAndData);
  return {
    ...fields,
    sender: r.address(p),
    nonce: r.uint(p + 32),
    callGasLimit,
    verificationGasLimit,
    preVerificationGas: r.uint(p + 160),
    maxFeePerGas,
    maxPriorityFeePerGas,
    paymasterVerificationGasLimit: pmGas?.verification ?? null,
    paymasterPostOpGasLimit: pmGas?.postOp ?? null,
    paymasterSignature: null,
    aggregator,
    opIndex,
    structAt: p,
  };
}

/** handleOps / handleAggregatedOps of the packed family, each op read by `readOneOp`. */
const bundleCallReader =
  (readOneOp: OpReader) =>
  (input: string): HandleOpsCall | null => {
    const selector = input.slice(0, 10).toLowerCase();
    if (selector === SELECTORS.handleOpsV07) return readBundleCall(input, false, readOneOp);
    if (selector === SELECTORS.handleAggregatedOpsV07) return readBundleCall(input, true, readOneOp);
    return null;
  };

export const entryPointV07: EntryPointDecoder = {
  bundleSelectors: [SELECTORS.handleOpsV07, SELECTORS.handleAggregatedOpsV07],
  innerHandleOpSelector: SELECTORS.innerHandleOpV07,

  decodeHandleOps: bundleCallReader(readOp),

  /** As v0.6, after the 10-word v0.7 MemoryUserOp. */
  innerHandleOpHash(input: string): string | null {
    if (input.slice(0, 10).toLowerCase() !== SELECTORS.innerHandleOpV07) return null;
    return argumentsOf(input).bytes32(32 * (1 + 10));
  },
};

/** v0.9: v0.7's layout; the magic suffix means a paymaster signature only from v0.9 on. */
const readOpV09 = (r: HexReader, p: number, aggregator: string | null, opIndex: number): CalldataOp => {
  const op = readOp(r, p, aggregator, opIndex);
  return { ...op, paymasterSignature: paymasterSignatureOf(op.paymasterAndData) };
};

export const entryPointV09: EntryPointDecoder = { ...entryPointV07, decodeHandleOps: bundleCallReader(readOpV09) };
