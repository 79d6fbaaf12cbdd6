/**
 * Builders for constructed bundle transactions (receipts, logs, calldata, traces) for the pure
 * decoder tests: real ABI encodings through ethers, nothing hand-assembled.
 */
import { Interface, zeroPadValue, toBeHex, concat } from 'ethers';
import { ENTRY_POINT_V06, ENTRY_POINT_V07 } from '../../../indexer/decode/abi.js';
import type { CallFrame, RawBundleTx, RpcLog } from '../../../indexer/decode/chainTypes.js';
import { CANONICAL_ENTRYPOINTS } from '../../../shared/chain/constants.js';

export const EP06 = CANONICAL_ENTRYPOINTS['v0.6'];
export const EP07 = CANONICAL_ENTRYPOINTS['v0.7'];
export const ENTRY_POINTS = new Map(Object.entries(CANONICAL_ENTRYPOINTS).map(([v, a]) => [a, v as 'v0.6' | 'v0.7' | 'v0.8' | 'v0.9']));

export const EVENTS = new Interface([
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
  'event AccountDeployed(bytes32 indexed userOpHash, address indexed sender, address factory, address paymaster)',
  'event UserOperationRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)',
  'event PostOpRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)',
  'event UserOperationPrefundTooLow(bytes32 indexed userOpHash, address indexed sender, uint256 nonce)',
  'event BeforeExecution()',
  'event SignatureAggregatorChanged(address indexed aggregator)',
  'event Deposited(address indexed account, uint256 totalDeposit)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

export const addr = (n: number): string => zeroPadValue(toBeHex(n), 20).toLowerCase();
export const hash = (n: number): string => zeroPadValue(toBeHex(n), 32).toLowerCase();
export const ZERO = addr(0);

/** Logs of one transaction, numbered as they are added. */
export class TxBuilder {
  readonly logs: RpcLog[] = [];
  constructor(
    readonly txHash = hash(0xabc),
    readonly blockNumber = 100,
    private readonly firstLogIndex = 0,
  ) {}

  log(address: string, event: string, args: unknown[]): this {
    const { topics, data } = EVENTS.encodeEventLog(event, args);
    this.logs.push({
      address,
      topics: topics.map((t) => t.toLowerCase()),
      data: data.toLowerCase(),
      blockNumber: toBeHex(this.blockNumber),
      blockHash: hash(0xb10c),
      blockTimestamp: toBeHex(1_700_000_000),
      transactionHash: this.txHash,
      transactionIndex: '0x0',
      logIndex: toBeHex(this.firstLogIndex + this.logs.length),
    });
    return this;
  }

  beforeExecution(ep: string): this {
    return this.log(ep, 'BeforeExecution', []);
  }

  opEvent(ep: string, op: { hash: string; sender: string; paymaster?: string; nonce: bigint; success?: boolean; cost?: bigint }): this {
    return this.log(ep, 'UserOperationEvent', [
      op.hash,
      op.sender,
      op.paymaster ?? ZERO,
      op.nonce,
      op.success ?? true,
      op.cost ?? 1000n,
      500n,
    ]);
  }

  raw(input: string, options: { to?: string; from?: string; trace?: CallFrame | null } = {}): RawBundleTx {
    return {
      receipt: {
        transactionHash: this.txHash,
        transactionIndex: '0x0',
        blockHash: hash(0xb10c),
        blockNumber: toBeHex(this.blockNumber),
        from: options.from ?? addr(0xb0b),
        to: options.to ?? EP07,
        status: '0x1',
        gasUsed: '0x5208',
        effectiveGasPrice: '0x3b9aca00',
        logs: this.logs,
      },
      tx: { hash: this.txHash, from: options.from ?? addr(0xb0b), to: options.to ?? EP07, input, blockHash: hash(0xb10c) },
      trace: options.trace,
      blockTime: 1_700_000_000,
    };
  }
}

export type OpFields = {
  sender: string;
  nonce: bigint;
  initCode?: string;
  callData?: string;
  callGasLimit?: bigint;
  verificationGasLimit?: bigint;
  preVerificationGas?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  paymasterAndData?: string;
  signature?: string;
};

const filled = (o: OpFields) => ({
  initCode: '0x',
  callData: '0x',
  callGasLimit: 100_000n,
  verificationGasLimit: 200_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterAndData: '0x',
  signature: '0x',
  ...o,
});

const pack128 = (high: bigint, low: bigint): string => zeroPadValue(toBeHex((high << 128n) | low), 32);

export function v06Struct(o: OpFields): unknown[] {
  const f = filled(o);
  return [
    f.sender,
    f.nonce,
    f.initCode,
    f.callData,
    f.callGasLimit,
    f.verificationGasLimit,
    f.preVerificationGas,
    f.maxFeePerGas,
    f.maxPriorityFeePerGas,
    f.paymasterAndData,
    f.signature,
  ];
}

export function v07Struct(o: OpFields): unknown[] {
  const f = filled(o);
  return [
    f.sender,
    f.nonce,
    f.initCode,
    f.callData,
    pack128(f.verificationGasLimit, f.callGasLimit),
    f.preVerificationGas,
    pack128(f.maxPriorityFeePerGas, f.maxFeePerGas),
    f.paymasterAndData,
    f.signature,
  ];
}

export const handleOpsV06 = (ops: OpFields[], beneficiary: string): string =>
  ENTRY_POINT_V06.encodeFunctionData('handleOps', [ops.map(v06Struct), beneficiary]);
export const handleOpsV07 = (ops: OpFields[], beneficiary: string): string =>
  ENTRY_POINT_V07.encodeFunctionData('handleOps', [ops.map(v07Struct), beneficiary]);
export const handleAggregatedOpsV07 = (groups: Array<{ ops: OpFields[]; aggregator: string }>, beneficiary: string): string =>
  ENTRY_POINT_V07.encodeFunctionData('handleAggregatedOps', [
    groups.map((g) => [g.ops.map(v07Struct), g.aggregator, '0x1234']),
    beneficiary,
  ]);
export const handleAggregatedOpsV06 = (groups: Array<{ ops: OpFields[]; aggregator: string }>, beneficiary: string): string =>
  ENTRY_POINT_V06.encodeFunctionData('handleAggregatedOps', [
    groups.map((g) => [g.ops.map(v06Struct), g.aggregator, '0x1234']),
    beneficiary,
  ]);

/** v0.7+ paymasterAndData: paymaster ‖ verification gas (16) ‖ postOp gas (16) ‖ data. */
export const packPaymaster = (paymaster: string, verification: bigint, postOp: bigint, data = '0x'): string =>
  concat([paymaster, zeroPadValue(toBeHex(verification), 16), zeroPadValue(toBeHex(postOp), 16), data]).toLowerCase();

export const frame = (f: Partial<CallFrame> & { to: string; input: string }): CallFrame => ({ type: 'CALL', from: addr(0xb0b), ...f });
