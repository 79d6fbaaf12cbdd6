import type { CallFrame } from '../../shared/db/tables/userOpTraces.js';
import { type TraceNode, type UserOp, type UserOpMetadata } from '../../shared/models/index.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

/** Builders of getUserOpMetadata's parts from stored rows (pure). */

type BigNumberItem = { type: 'BigNumber'; hex: string };

/** ethers-v5 BigNumber JSON, as clients parse `userOpParams` numbers (`parseInt(x.hex)`). */
function bigNumber(decimal: string | null): BigNumberItem {
  const hex = BigInt(decimal ?? '0').toString(16);
  return { type: 'BigNumber', hex: `0x${hex.length % 2 ? `0${hex}` : hex}` };
}

/**
 * The op's fields by position, as explorers index them (JiffyScan's): v0.6
 * [sender, nonce, initCode, callData, callGasLimit, verificationGasLimit, preVerificationGas,
 * maxFeePerGas, maxPriorityFeePerGas, paymasterAndData, signature]; v0.7+ (packed) [sender, nonce,
 * initCode, callData, accountGasLimits, preVerificationGas, gasFees, paymasterAndData, signature].
 * Empty while the op's calldata is not decoded.
 */
export function userOpParamsOf(op: UserOp): UserOpMetadata['userOpParams'] {
  if (op.signature === null) return [];
  const head = [op.sender, bigNumber(op.nonce), op.initCode ?? '0x', op.preDecodedCallData];
  if (op.entryPointVersion === 'v0.6') {
    return [
      ...head,
      bigNumber(op.callGasLimit),
      bigNumber(op.verificationGasLimit),
      bigNumber(op.preVerificationGas),
      bigNumber(op.maxFeePerGas),
      bigNumber(op.maxPriorityFeePerGas),
      op.paymasterAndData ?? '0x',
      op.signature,
    ];
  }
  return [
    ...head,
    op.accountGasLimits ?? '0x',
    bigNumber(op.preVerificationGas),
    op.gasFees ?? '0x',
    op.paymasterAndData ?? '0x',
    op.signature,
  ];
}

const hex = (value: string | undefined, fallback = '0x'): string => (value ?? fallback).toLowerCase();

/** A callTracer frame as the spec's `{traceData, next}` node; the root is the op's execution call. */
export function toTraceNode(frame: CallFrame, root = true): TraceNode {
  return {
    traceData: {
      from: hex(frame.from, ZERO_ADDRESS),
      to: hex(frame.to, ZERO_ADDRESS),
      input: hex(frame.input),
      type: frame.type ?? 'CALL',
      gas: hex(frame.gas, '0x0'),
      gasUsed: hex(frame.gasUsed, '0x0'),
      output: hex(frame.output),
      ...(frame.value !== undefined ? { value: hex(frame.value) } : {}),
      ...(root ? { executionCall: true } : {}),
    },
    next: (frame.calls ?? []).map((child) => toTraceNode(child, false)),
  };
}
