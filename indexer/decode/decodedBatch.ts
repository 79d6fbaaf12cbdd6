/**
 * The output of decoding one block range: rows ready for persist/persistBatch (which writes them
 * in one transaction with the cursor). Addresses and hashes are lower-case hex, uint256 values
 * bigint, block numbers and unix seconds numbers.
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import type { AccountCall } from './accountCalls.js';
import type { Failure } from './bundleLogs.js';
import type { BlockHeader, CallFrame } from './chainTypes.js';
import type { TokenStandard } from './transfers.js';

/** ok: calldata decoded; calldata_missing: no handleOps call matched the op; trace_needed: the
 * EntryPoint was called indirectly and the node cannot trace; decode_failed: calldata malformed. */
export type DecodeStatus = 'ok' | 'calldata_missing' | 'trace_needed' | 'decode_failed';

export type DecodedUserOp = {
  userOpHash: string;
  entryPoint: string;
  entryPointVersion: EntryPointVersion;
  sender: string;
  paymaster: string | null;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  failure: Failure | null;
  revertReason: string | null;
  revertMessage: string | null;
  blockNumber: number;
  blockHash: string;
  blockTime: number;
  txHash: string;
  txIndex: number;
  bundleIndex: number;
  opIndex: number | null;
  logIndex: number;
  execLogFrom: number;
  execLogTo: number;
  bundler: string;
  beneficiary: string | null;
  /** The factory of an AccountDeployed for this op (it deployed its sender). */
  factory: string | null;
  /** Log index of that AccountDeployed. */
  deployedLogIndex: number | null;
  aggregator: string | null;
  initCode: string | null;
  callData: string | null;
  signature: string | null;
  paymasterAndData: string | null;
  callGasLimit: bigint | null;
  verificationGasLimit: bigint | null;
  preVerificationGas: bigint | null;
  maxFeePerGas: bigint | null;
  maxPriorityFeePerGas: bigint | null;
  paymasterVerificationGasLimit: bigint | null;
  paymasterPostOpGasLimit: bigint | null;
  accountGasLimits: string | null;
  gasFees: string | null;
  decodeStatus: DecodeStatus;
  calls: AccountCall[];
};

export type DecodedBundleTx = {
  txHash: string;
  blockNumber: number;
  blockHash: string;
  blockTime: number;
  txIndex: number;
  from: string;
  to: string | null;
  input: string;
  status: boolean;
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  /** gasUsed × effectiveGasPrice (+ L1 data fee where reported), wei. */
  fee: bigint;
};

export type DecodedBundle = {
  txHash: string;
  bundleIndex: number;
  blockNumber: number;
  blockTime: number;
  entryPoint: string;
  entryPointVersion: EntryPointVersion;
  bundler: string;
  beneficiary: string | null;
  aggregated: boolean;
  opsCount: number;
  opsFailed: number;
  actualGasCostSum: bigint;
};

export type DecodedLog = {
  txHash: string;
  logIndex: number;
  txLogIndex: number;
  blockNumber: number;
  address: string;
  topics: string[];
  data: string;
  userOpHash: string | null;
};

export type TransferStandard = TokenStandard | 'NATIVE';

export type DecodedTransfer = {
  txHash: string;
  /** Block-level log index; NATIVE: -1 - the op's UserOperationEvent log index. */
  logIndex: number;
  /** ERC-1155 TransferBatch position; NATIVE: the call index. */
  batchIndex: number;
  blockNumber: number;
  blockTime: number;
  userOpHash: string | null;
  standard: TransferStandard;
  token: string | null;
  from: string;
  to: string;
  value: bigint;
  tokenId: bigint | null;
};

export type DepositEvent = 'Deposited' | 'Withdrawn' | 'StakeLocked' | 'StakeUnlocked' | 'StakeWithdrawn';

export type DecodedDeposit = {
  blockNumber: number;
  logIndex: number;
  txHash: string;
  entryPoint: string;
  account: string;
  event: DepositEvent;
  amount: bigint | null;
  totalDeposit: bigint | null;
};

export type DecodedTrace = { userOpHash: string; status: 'ok' | 'unavailable'; trace: CallFrame | null };

export type DecodedAddressTx = { address: string; txHash: string; blockNumber: number; txIndex: number };

export type TokenMetadata = { address: string; standard: TokenStandard; name: string | null; symbol: string | null; decimals: number | null };

export type DecodedBatch = {
  chainId: number;
  fromBlock: number;
  toBlock: number;
  /** Headers to keep for reorg detection (always includes toBlock). */
  headers: BlockHeader[];
  bundleTxs: DecodedBundleTx[];
  bundles: DecodedBundle[];
  userOps: DecodedUserOp[];
  logs: DecodedLog[];
  transfers: DecodedTransfer[];
  deposits: DecodedDeposit[];
  traces: DecodedTrace[];
  addressTxs: DecodedAddressTx[];
  /** Tokens seen in transfers; metadata is filled in (by RPC) before persisting when unknown. */
  tokens: Array<{ address: string; standard: TokenStandard }>;
  tokenMetadata: TokenMetadata[];
};
