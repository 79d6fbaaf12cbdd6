/**
 * EntryPoint ABIs, as human-readable fragments, their function selectors, and how the words of
 * logs and ABI data read (selectors are checked against the published EntryPoint artifacts in
 * test/indexer/decode/abi.test.ts). The event topics and the zero address are shared/chain/constants.ts's.
 */
import { Interface } from 'ethers';

const V06_OP =
  '(address sender,uint256 nonce,bytes initCode,bytes callData,uint256 callGasLimit,uint256 verificationGasLimit,uint256 preVerificationGas,uint256 maxFeePerGas,uint256 maxPriorityFeePerGas,bytes paymasterAndData,bytes signature)';
const PACKED_OP =
  '(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData,bytes signature)';
const V06_MEMORY_OP =
  '(address sender,uint256 nonce,uint256 callGasLimit,uint256 verificationGasLimit,uint256 preVerificationGas,address paymaster,uint256 maxFeePerGas,uint256 maxPriorityFeePerGas)';
const V07_MEMORY_OP =
  '(address sender,uint256 nonce,uint256 verificationGasLimit,uint256 callGasLimit,uint256 paymasterVerificationGasLimit,uint256 paymasterPostOpGasLimit,uint256 preVerificationGas,address paymaster,uint256 maxFeePerGas,uint256 maxPriorityFeePerGas)';
const opInfo = (memoryOp: string) => `(${memoryOp} mUserOp,bytes32 userOpHash,uint256 prefund,uint256 contextOffset,uint256 preOpGas)`;

/** v0.6 EntryPoint: the UserOperation struct. */
export const ENTRY_POINT_V06 = new Interface([
  `function handleOps(${V06_OP}[] ops, address beneficiary)`,
  `function handleAggregatedOps((${V06_OP}[] userOps, address aggregator, bytes signature)[] opsPerAggregator, address beneficiary)`,
  `function innerHandleOp(bytes callData, ${opInfo(V06_MEMORY_OP)} opInfo, bytes context) returns (uint256)`,
]);

/** v0.7 / v0.8 (and v0.9) EntryPoint: the PackedUserOperation struct. */
export const ENTRY_POINT_V07 = new Interface([
  `function handleOps(${PACKED_OP}[] ops, address beneficiary)`,
  `function handleAggregatedOps((${PACKED_OP}[] userOps, address aggregator, bytes signature)[] opsPerAggregator, address beneficiary)`,
  `function innerHandleOp(bytes callData, ${opInfo(V07_MEMORY_OP)} opInfo, bytes context) returns (uint256)`,
]);

const selectorOf = (iface: Interface, name: string): string => iface.getFunction(name)!.selector;

export const SELECTORS = {
  handleOpsV06: selectorOf(ENTRY_POINT_V06, 'handleOps'),
  handleAggregatedOpsV06: selectorOf(ENTRY_POINT_V06, 'handleAggregatedOps'),
  innerHandleOpV06: selectorOf(ENTRY_POINT_V06, 'innerHandleOp'),
  handleOpsV07: selectorOf(ENTRY_POINT_V07, 'handleOps'),
  handleAggregatedOpsV07: selectorOf(ENTRY_POINT_V07, 'handleAggregatedOps'),
  innerHandleOpV07: selectorOf(ENTRY_POINT_V07, 'innerHandleOp'),
} as const;

/** The address in a 32-byte topic or word, lower-case. */
export function wordToAddress(word: string): string {
  return `0x${word.slice(-40)}`.toLowerCase();
}

/** The 32-byte words of ABI-encoded data (no 0x), as 64-char hex strings. */
export function dataWord(data: string, index: number): string {
  const start = 2 + index * 64;
  return data.slice(start, start + 64);
}

export function wordToBigInt(word: string): bigint {
  return word.length === 0 ? 0n : BigInt(`0x${word}`);
}
