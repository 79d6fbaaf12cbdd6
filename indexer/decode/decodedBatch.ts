/**
 * The output of decoding one block range: rows ready for persist/persistBatch (which writes them
 * in one transaction with the cursor). Addresses and hashes are lower-case hex, uint256 values
 * bigint, block numbers and unix seconds numbers.
 */
import type { NewBundleTransaction } from '../../shared/db/tables/bundleTransactions.js';
import type { NewModuleEvent } from '../../shared/db/tables/moduleEvents.js';
import type { NewDelegation } from '../../shared/db/tables/delegations.js';
import type { NewUserOp } from '../../shared/db/tables/userOps.js';
import type { EntryPointVersion } from '../../shared/networks.js';
import type { AccountCall } from '../../shared/calldata/accountCalls.js';
import type { Failure } from './bundleLogs.js';
import type { BlockHeader, CallFrame } from './chainTypes.js';
import type { TokenStandard } from './transfers.js';

/** ok: calldata decoded; calldata_missing: no handleOps call matched the op; trace_needed: the
 * EntryPoint was called indirectly and the node cannot trace; decode_failed: calldata malformed. */
export type DecodeStatus = 'ok' | 'calldata_missing' | 'trace_needed' | 'decode_failed';

/**
 * An op as decoded: the row userOps.insertMany stores (with the version and failure narrowed),
 * plus what persistence derives the rest from.
 */
export type DecodedUserOp = NewUserOp & {
  entryPointVersion: EntryPointVersion;
  failure: Failure | null;
  /** Log index of the AccountDeployed of this op, when it deployed its sender (`factory` is set). */
  deployedLogIndex: number | null;
  decodeStatus: DecodeStatus;
  calls: AccountCall[];
};

/** A bundle transaction as bundleTransactions.insertMany stores it. */
export type DecodedBundleTx = NewBundleTransaction;

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
  /** Its share of its transaction's fee (indexer/decode/bundleFees.ts). */
  feeShare: bigint;
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
  /** null: a transfer of a bundle transaction outside any op, or (INDEXER_TRANSFERS=known) of a plain transaction, to or from a known address. */
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

/** An ERC-7579 ModuleInstalled / ModuleUninstalled of an op's sender (moduleEvents.ts). */
export type DecodedModuleEvent = NewModuleEvent;

export type DecodedAddressTx = { address: string; blockNumber: number; txIndex: number };

export type TokenMetadata = {
  address: string;
  standard: TokenStandard;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
};

export type DecodedBatch = {
  chainId: number;
  fromBlock: number;
  toBlock: number;
  /** Headers to keep for reorg detection (always includes toBlock). */
  headers: BlockHeader[];
  bundleTxs: DecodedBundleTx[];
  bundles: DecodedBundle[];
  userOps: DecodedUserOp[];
  transfers: DecodedTransfer[];
  deposits: DecodedDeposit[];
  traces: DecodedTrace[];
  addressTxs: DecodedAddressTx[];
  moduleEvents: DecodedModuleEvent[];
  /** EIP-7702 authorizations of the transactions read (INDEXER_DELEGATIONS), effective or not. */
  delegations: NewDelegation[];
  /**
   * The parties of the batch's ops (senders, paymasters, factories, bundlers), each with the first
   * block it appears in, and the last block the transfer backfill must read for it (null: up to
   * the cursor, when the forward pass does not read token logs; see known_addresses).
   */
  knownAddresses: Array<{ address: string; firstBlock: number; backfillTo: number | null }>;
  /** Tokens seen in transfers; metadata is filled in (by RPC) before persisting when unknown. */
  tokens: Array<{ address: string; standard: TokenStandard }>;
  tokenMetadata: TokenMetadata[];
};

/** A batch of the blocks fromBlock..toBlock holding nothing yet (decoding fills it in). */
export function emptyBatch(chainId: number, fromBlock: number, toBlock: number, headers: BlockHeader[] = []): DecodedBatch {
  return {
    chainId,
    fromBlock,
    toBlock,
    headers,
    bundleTxs: [],
    bundles: [],
    userOps: [],
    transfers: [],
    deposits: [],
    traces: [],
    addressTxs: [],
    moduleEvents: [],
    delegations: [],
    knownAddresses: [],
    tokens: [],
    tokenMetadata: [],
  };
}
