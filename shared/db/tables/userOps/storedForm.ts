/**
 * The stored form of a user op: the row `user_ops` keeps (UserOpRow, read back with its bundle
 * transaction's input, its calls and its accounts' factories as StoredUserOp), the op as the indexer
 * hands it over (NewUserOp), its columns, and how an op is packed into its row and unpacked from it.
 * A row keeps its input fields in its transaction's input where they read back exactly (op_at), its
 * calls as slices of its callData (userOpCalls.ts), and its block hash, EntryPoint and beneficiary
 * on its transaction's and bundle's rows unless its own beneficiary differs.
 */
import { AbiReadError } from '../../../calldata/hexAbi.js';
import type { AccountCall } from '../../../calldata/accountCalls.js';
import { opInputFieldsAt, type OpInputFields } from '../../../calldata/userOpLayout.js';
import { byteaLiteral } from '../../entityView.js';
import { numeric, type Column } from '../../unnest.js';
import { storedCalls, type StoredCalls, type UserOpCall } from '../userOpCalls.js';

export type UserOpRow = {
  chain_id: string;
  user_op_hash: string;
  /** Its bundle's (keptByBundle). */
  entry_point: string;
  entry_point_version: string;
  sender: string;
  paymaster: string | null;
  nonce: string;
  success: boolean;
  actual_gas_cost: string;
  actual_gas_used: string;
  failure: string | null;
  revert_reason: string | null;
  revert_message: string | null;
  block_number: string;
  /** Its transaction's (keptByBundle). */
  block_hash: string;
  block_time: string;
  tx_hash: string;
  tx_index: number;
  bundle_index: number;
  op_index: number | null;
  /** Offset of the op's struct in its transaction's input, which then holds its input fields (withInputFields). */
  op_at: number | null;
  log_index: number;
  bundler: string;
  /** Its own where it is not its bundle's, else its bundle's (beneficiaryOf). */
  beneficiary: string | null;
  factory: string | null;
  init_code: string | null;
  call_data: string | null;
  signature: string | null;
  paymaster_and_data: string | null;
  call_gas_limit: string | null;
  verification_gas_limit: string | null;
  pre_verification_gas: string | null;
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  paymaster_verification_gas_limit: string | null;
  paymaster_post_op_gas_limit: string | null;
  account_gas_limits: string | null;
  gas_fees: string | null;
  eip7702: boolean;
  paymaster_signature: string | null;
};

/** A stored op with its bundle transaction's input, its decoded calls and its accounts' factories. */
export type StoredUserOp = UserOpRow & {
  /** Input of the bundle transaction (null if that row is missing). */
  input: string | null;
  calls: UserOpCall[];
  /** accounts.factory of the sender (null: not deployed by an indexed AccountDeployed). */
  sender_factory: string | null;
  target_factory: string | null;
  /** accounts.eip7702 of the sender (an earlier op may have shown the delegation). */
  sender_eip7702: boolean | null;
  /** accounts.implementation of the sender (null: not named yet). */
  sender_implementation: string | null;
};

/** The op's bundle (bundles' primary key), for a column the op's row leaves to it. */
export const ofBundle = (op: string, column: string) =>
  `(select b.${column} from bundles b where b.chain_id = ${op}.chain_id and b.tx_hash = ${op}.tx_hash and b.bundle_index = ${op}.bundle_index)`;

/** The op's transaction (bundle_transactions' primary key), for a column the op's row leaves to it. */
export const ofTransaction = (op: string, column: string) =>
  `(select bt.${column} from bundle_transactions bt where bt.chain_id = ${op}.chain_id and bt.tx_hash = ${op}.tx_hash)`;

/**
 * SQL for the beneficiary of the user_ops row `op`: its own where it is not its bundle's (`\x`
 * standing for none), else its bundle's.
 */
export const beneficiaryOf = (op: string): string =>
  `nullif(coalesce(${op}.beneficiary_unlike_bundle, ${ofBundle(op, 'beneficiary')}), ${byteaLiteral('0x')})`;

/**
 * SQL for the columns the user_ops row `op` leaves to its transaction and bundle, under the names
 * UserOpRow gives them: block_hash, entry_point, beneficiary.
 */
export const keptByBundle = (op: string): string =>
  `${ofTransaction(op, 'block_hash')} as block_hash, ${ofBundle(op, 'entry_point')} as entry_point, ${beneficiaryOf(op)} as beneficiary`;

/**
 * The block of the bundle transaction whose hash is `txHash` (a bytea parameter, or `any(list)`) on
 * chain $1: the ops of a transaction are found as that block's range of user_ops_latest, as user_ops
 * has no index by transaction. A transaction's ops are all in its block, and the
 * indexer writes its row with them.
 */
export const blockOfTransaction = (txHash: string) =>
  `select bt.block_number from bundle_transactions bt where bt.chain_id = $1 and bt.tx_hash = ${txHash}`;

/** What filling an op's input fields back needs of its row: its version, op_at, its transaction's input. */
type InputFieldsRow = Pick<
  UserOpRow,
  'entry_point_version' | 'op_at' | 'init_code' | 'call_data' | 'paymaster_and_data' | 'signature' | 'account_gas_limits' | 'gas_fees'
> & { input: string | null };

/**
 * The op's input fields (init_code, call_data, paymaster_and_data, signature, account_gas_limits,
 * gas_fees) filled back from its transaction's input when it keeps them there (op_at), read with
 * the indexer's struct layout. Every read of stored ops goes through it.
 */
export function withInputFields<Row extends InputFieldsRow>(op: Row): Row {
  if (op.op_at === null || op.input === null) return op;
  const fields = opInputFieldsAt(op.input, op.op_at, op.entry_point_version);
  return {
    ...op,
    init_code: fields.initCode,
    call_data: fields.callData,
    paymaster_and_data: fields.paymasterAndData,
    signature: fields.signature,
    account_gas_limits: fields.accountGasLimits,
    gas_fees: fields.gasFees,
  };
}

/** An op as the indexer inserts it (uint256 fields as bigint). */
export type NewUserOp = {
  userOpHash: string;
  entryPoint: string;
  entryPointVersion: string;
  sender: string;
  paymaster: string | null;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  failure: string | null;
  revertReason: string | null;
  revertMessage: string | null;
  blockNumber: number;
  blockHash: string;
  blockTime: number;
  txHash: string;
  txIndex: number;
  bundleIndex: number;
  opIndex: number | null;
  /**
   * Byte offset of the op's struct in its transaction's input (selector included) when it was
   * decoded from that input (the direct handleOps call); null otherwise. Its input fields are then
   * stored there only (storedForm).
   */
  opAt: number | null;
  logIndex: number;
  execLogFrom: number;
  execLogTo: number;
  bundler: string;
  beneficiary: string | null;
  factory: string | null;
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
  decodeStatus: string;
  /** The sender is an EIP-7702 delegated EOA. */
  eip7702: boolean;
  /** v0.9: the paymaster signature suffix of paymasterAndData. */
  paymasterSignature: string | null;
  /** The target of the account's first call (the subgraph's `target`); null when no call was decoded. */
  target: string | null;
  /** The account calls decoded from callData, in order (stored on the op's row as userOpCalls.ts says). */
  calls: AccountCall[];
};

// block_hash and entry_point are its transaction's and bundle's (keptByBundle).
export const NEW_USER_OP_COLUMNS: ReadonlyArray<Column<StoredForm>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['user_op_hash', 'bytea', (o) => o.userOpHash],
  ['entry_point_version', 'text', (o) => o.entryPointVersion],
  ['sender', 'bytea', (o) => o.sender],
  ['paymaster', 'bytea', (o) => o.paymaster],
  ['nonce', 'numeric', (o) => numeric(o.nonce)],
  ['success', 'boolean', (o) => o.success],
  ['actual_gas_cost', 'numeric', (o) => numeric(o.actualGasCost)],
  ['actual_gas_used', 'numeric', (o) => numeric(o.actualGasUsed)],
  ['failure', 'text', (o) => o.failure],
  ['revert_reason', 'bytea', (o) => o.revertReason],
  ['revert_message', 'text', (o) => o.revertMessage],
  ['block_number', 'bigint', (o) => o.blockNumber],
  ['block_time', 'bigint', (o) => o.blockTime],
  ['tx_hash', 'bytea', (o) => o.txHash],
  ['tx_index', 'integer', (o) => o.txIndex],
  ['bundle_index', 'integer', (o) => o.bundleIndex],
  ['op_index', 'integer', (o) => o.opIndex],
  ['op_at', 'integer', (o) => o.opAt],
  ['log_index', 'integer', (o) => o.logIndex],
  ['exec_log_from', 'integer', (o) => o.execLogFrom],
  ['exec_log_to', 'integer', (o) => o.execLogTo],
  ['bundler', 'bytea', (o) => o.bundler],
  ['beneficiary_unlike_bundle', 'bytea', (o) => o.beneficiaryUnlikeBundle],
  ['factory', 'bytea', (o) => o.factory],
  ['aggregator', 'bytea', (o) => o.aggregator],
  ['init_code', 'bytea', (o) => o.initCode],
  ['call_data', 'bytea', (o) => o.callData],
  ['signature', 'bytea', (o) => o.signature],
  ['paymaster_and_data', 'bytea', (o) => o.paymasterAndData],
  ['call_gas_limit', 'numeric', (o) => numeric(o.callGasLimit)],
  ['verification_gas_limit', 'numeric', (o) => numeric(o.verificationGasLimit)],
  ['pre_verification_gas', 'numeric', (o) => numeric(o.preVerificationGas)],
  ['max_fee_per_gas', 'numeric', (o) => numeric(o.maxFeePerGas)],
  ['max_priority_fee_per_gas', 'numeric', (o) => numeric(o.maxPriorityFeePerGas)],
  ['paymaster_verification_gas_limit', 'numeric', (o) => numeric(o.paymasterVerificationGasLimit)],
  ['paymaster_post_op_gas_limit', 'numeric', (o) => numeric(o.paymasterPostOpGasLimit)],
  ['account_gas_limits', 'bytea', (o) => o.accountGasLimits],
  ['gas_fees', 'bytea', (o) => o.gasFees],
  ['decode_status', 'text', (o) => o.decodeStatus],
  ['eip7702', 'boolean', (o) => o.eip7702],
  ['paymaster_signature', 'bytea', (o) => o.paymasterSignature],
  ['target', 'bytea', (o) => o.target],
  // The calls as the row keeps them (storedForm); unnest flattens nested arrays: the arrays
  // travel as array literals, cast back to arrays.
  ['calls_target', 'bytea', (o) => o.storedCalls.target],
  ['calls_value', 'text', (o) => o.storedCalls.value, (v) => `${v}::numeric[]`],
  ['calls_data', 'text', (o) => o.storedCalls.data, (v) => `${v}::bytea[]`],
  ['calls_data_at', 'bytea', (o) => o.storedCalls.dataAt],
];

/**
 * What the rows of an op's bundle and transaction hold, written with it: each transaction's input
 * (bundle_transactions.input) by hash, each bundle's beneficiary by `txHash:bundleIndex`.
 */
export type OpContainers = { inputs: ReadonlyMap<string, string>; beneficiaries: ReadonlyMap<string, string | null> };

export function opContainers(
  txs: ReadonlyArray<{ txHash: string; input: string }>,
  bundles: ReadonlyArray<{ txHash: string; bundleIndex: number; beneficiary: string | null }>,
): OpContainers {
  return {
    inputs: new Map(txs.map((t) => [t.txHash, t.input])),
    beneficiaries: new Map(bundles.map((b) => [`${b.txHash}:${b.bundleIndex}`, b.beneficiary])),
  };
}

/**
 * The op's beneficiary_unlike_bundle: null where it is its bundle's, else its own (`0x` standing
 * for none); read back by beneficiaryOf.
 */
function beneficiaryUnlikeBundle(op: NewUserOp, containers: OpContainers): string | null {
  const key = `${op.txHash}:${op.bundleIndex}`;
  if (containers.beneficiaries.has(key) && containers.beneficiaries.get(key) === op.beneficiary) return null;
  return op.beneficiary ?? '0x';
}

/** Whether reading the op's struct back from `input` at opAt gives exactly its decoded fields. */
function readsBackFromInput(op: NewUserOp & { opAt: number }, input: string): boolean {
  let fields: OpInputFields;
  try {
    fields = opInputFieldsAt(input, op.opAt, op.entryPointVersion);
  } catch (error) {
    if (error instanceof AbiReadError) return false;
    throw error;
  }
  const same = (stored: string | null, decoded: string | null) => stored === (decoded === null ? null : decoded.toLowerCase());
  return (
    same(fields.initCode, op.initCode) &&
    same(fields.callData, op.callData) &&
    same(fields.paymasterAndData, op.paymasterAndData) &&
    same(fields.signature, op.signature) &&
    same(fields.accountGasLimits, op.accountGasLimits) &&
    same(fields.gasFees, op.gasFees)
  );
}

/** An op as its row stores it (storedForm). */
export type StoredForm = NewUserOp & { storedCalls: StoredCalls; beneficiaryUnlikeBundle: string | null };

/**
 * The op as its row stores it: its input fields kept only in its transaction's input (op_at set,
 * the columns null) when they read back from there exactly as decoded; otherwise in its columns
 * (op_at null). Its calls' data kept as slices of its callData where they are; its beneficiary
 * only where it is not its bundle's.
 * Reads fill them back (withInputFields, callsOfRow, keptByBundle).
 */
export function storedForm(op: NewUserOp, containers: OpContainers): StoredForm {
  const stored = {
    ...op,
    storedCalls: storedCalls(op.calls, op.callData),
    beneficiaryUnlikeBundle: beneficiaryUnlikeBundle(op, containers),
  };
  if (op.opAt === null) return stored;
  const input = containers.inputs.get(op.txHash);
  if (input === undefined || !readsBackFromInput({ ...op, opAt: op.opAt }, input)) return { ...stored, opAt: null };
  return { ...stored, initCode: null, callData: null, paymasterAndData: null, signature: null, accountGasLimits: null, gasFees: null };
}
