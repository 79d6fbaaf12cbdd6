/** v0.6 EntryPoint calldata: the unpacked `UserOperation` struct. */
import { SELECTORS } from './abi.js';
import type { CalldataOp, EntryPointDecoder, HandleOpsCall } from './entryPointDecoder.js';
import { readBundleCall } from './handleOpsLayout.js';
import { argumentsOf, type HexReader } from '../../shared/calldata/hexAbi.js';
import { readOpInputFields } from '../../shared/calldata/userOpLayout.js';

/** UserOperation at byte `p`: 11 head words, offsets of its bytes fields relative to `p`. */
function readOp(r: HexReader, p: number, aggregator: string | null, opIndex: number): CalldataOp {
  return {
    ...readOpInputFields(r, p, true),
    sender: r.address(p),
    nonce: r.uint(p + 32),
    callGasLimit: r.uint(p + 128),
    verificationGasLimit: r.uint(p + 160),
    preVerificationGas: r.uint(p + 192),
    maxFeePerGas: r.uint(p + 224),
    maxPriorityFeePerGas: r.uint(p + 256),
    paymasterVerificationGasLimit: null,
    paymasterPostOpGasLimit: null,
    paymasterSignature: null,
    aggregator,
    opIndex,
    structAt: p,
  };
}

export const entryPointV06: EntryPointDecoder = {
  bundleSelectors: [SELECTORS.handleOpsV06, SELECTORS.handleAggregatedOpsV06],
  innerHandleOpSelector: SELECTORS.innerHandleOpV06,

  decodeHandleOps(input: string): HandleOpsCall | null {
    const selector = input.slice(0, 10).toLowerCase();
    if (selector === SELECTORS.handleOpsV06) return readBundleCall(input, false, readOp);
    if (selector === SELECTORS.handleAggregatedOpsV06) return readBundleCall(input, true, readOp);
    return null;
  },

  /** innerHandleOp(bytes callData, UserOpInfo opInfo, bytes context): opInfo is static, inline after
   * the callData offset word; its userOpHash follows the 8-word MemoryUserOp. */
  innerHandleOpHash(input: string): string | null {
    if (input.slice(0, 10).toLowerCase() !== SELECTORS.innerHandleOpV06) return null;
    return argumentsOf(input).bytes32(32 * (1 + 8));
  },
};
