import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { columnArray, numeric, unnestInsert, type Column } from '../unnest.js';
import type { Page } from '../page.js';
import type { AccountCall } from '../../calldata/accountCalls.js';
import { AbiReadError } from '../../calldata/hexAbi.js';
import { OP_FIELD_SLOTS, opInputFieldsAt, type OpInputFields } from '../../calldata/userOpLayout.js';
import { ZERO_ADDRESS } from '../../models/primitives.js';
import type { UserOp } from '../../models/userOp.js';
import { findNetworkByChainId } from '../../networks.js';
import { byteaLiteral, column, hashIndexId, type EntityView } from '../entityView.js';
import { callsOfRow, firstCallValueSql, storedCalls, type StoredCallColumns, type StoredCalls, type UserOpCall } from './userOpCalls.js';

/**
 * Reads of `user_ops` (with what an answer needs from `bundle_transactions` and `accounts`). `toUserOp` is the one mapping from a stored op to the spec's UserOp: the API and the
 * webhook payloads both use it.
 */

export type UserOpRow = {
  chain_id: string;
  user_op_hash: string;
  /** Its bundle's (migration 0034). */
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
  /** Its transaction's (migration 0034). */
  block_hash: string;
  block_time: string;
  tx_hash: string;
  tx_index: number;
  bundle_index: number;
  op_index: number | null;
  /** Offset of the op's struct in its transaction's input, which then holds its input fields (migration 0028). */
  op_at: number | null;
  log_index: number;
  bundler: string;
  /** Its own where it is not its bundle's, else its bundle's (beneficiaryOf; migration 0034). */
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

export type { UserOpCall } from './userOpCalls.js';

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

const sum = (values: Array<string | null>): string | null =>
  values.some((v) => v === null) ? null : values.reduce((acc, v) => acc + BigInt(v!), 0n).toString();

/** The spec's UserOp (plus the fields real clients read) from a stored op. */
export function toUserOp(op: StoredUserOp): UserOp {
  const first = op.calls[0];
  const chainId = Number(op.chain_id);
  const postOpReverted = op.failure === 'postop_reverted';
  const v06 = op.entry_point_version === 'v0.6';
  const gasLimits = [op.call_gas_limit, op.verification_gas_limit, op.pre_verification_gas];
  if (!v06) gasLimits.push(op.paymaster_verification_gas_limit ?? '0', op.paymaster_post_op_gas_limit ?? '0');
  const gasUsed = BigInt(op.actual_gas_used);
  return {
    userOpHash: op.user_op_hash,
    transactionHash: op.tx_hash,
    sender: op.sender,
    target: first?.target ?? null,
    accountSender: { factory: op.sender_factory },
    accountTarget: first ? { factory: op.target_factory } : null,
    paymaster: op.paymaster ?? ZERO_ADDRESS,
    nonce: op.nonce,
    actualGasCost: op.actual_gas_cost,
    actualGasUsed: op.actual_gas_used,
    success: op.success,
    revertReason: postOpReverted ? null : op.revert_reason,
    blockTime: op.block_time,
    blockNumber: op.block_number,
    network: findNetworkByChainId(chainId)?.name ?? String(chainId),
    input: op.input ?? '0x',
    // "call data sent to the target": the first decoded call's data, else the op's own callData.
    callData: first?.data ?? op.call_data ?? '0x',
    beneficiary: op.beneficiary,
    // The spec's samples answer `0x` for an op that deployed nothing.
    factory: op.factory ?? '0x',
    value: first?.value ?? null,
    verificationGasLimit: op.verification_gas_limit,
    preVerificationGas: op.pre_verification_gas,
    maxFeePerGas: op.max_fee_per_gas,
    maxPriorityFeePerGas: op.max_priority_fee_per_gas,
    paymasterAndData: op.paymaster_and_data,
    signature: op.signature,
    id: `${op.user_op_hash}-${op.log_index}`,
    // What the op paid per unit of gas.
    gasPrice: gasUsed > 0n ? (BigInt(op.actual_gas_cost) / gasUsed).toString() : null,
    gasLimit: sum(gasLimits),
    callGasLimit: op.call_gas_limit,
    baseFeePerGas: null,
    status: op.success ? 'SUCCESS' : 'FAILED',
    entryPoint: op.entry_point,
    entryPointVersion: op.entry_point_version,
    initCode: op.init_code,
    accountGasLimits: op.account_gas_limits,
    gasFees: op.gas_fees,
    preDecodedCallData: op.call_data ?? '0x',
    paymasterRevertReason: postOpReverted ? op.revert_reason : null,
    revertMessage: op.revert_message,
    bundler: op.bundler,
    chainId,
    bundleIndex: op.bundle_index,
    logIndex: op.log_index,
    targets: op.calls.map((c) => c.target),
    values: op.calls.map((c) => c.value),
    callDatas: op.calls.map((c) => c.data),
    eip7702: op.eip7702 || op.sender_eip7702 === true,
    paymasterSignature: op.paymaster_signature,
    implementation: op.sender_implementation,
  };
}

/** The op's bundle (bundles' primary key), for a column the op's row leaves to it (migration 0034). */
const ofBundle = (op: string, column: string) =>
  `(select b.${column} from bundles b where b.chain_id = ${op}.chain_id and b.tx_hash = ${op}.tx_hash and b.bundle_index = ${op}.bundle_index)`;

/** The op's transaction (bundle_transactions' primary key), for a column the op's row leaves to it. */
const ofTransaction = (op: string, column: string) =>
  `(select bt.${column} from bundle_transactions bt where bt.chain_id = ${op}.chain_id and bt.tx_hash = ${op}.tx_hash)`;

/**
 * SQL for the beneficiary of the user_ops row `op`: its own where it is not its bundle's (`\x`
 * standing for none), else its bundle's (migration 0034).
 */
export const beneficiaryOf = (op: string): string =>
  `nullif(coalesce(${op}.beneficiary_unlike_bundle, ${ofBundle(op, 'beneficiary')}), ${byteaLiteral('0x')})`;

/**
 * SQL for the columns the user_ops row `op` leaves to its transaction and bundle (migration 0034),
 * under their former names: block_hash, entry_point, beneficiary.
 */
export const keptByBundle = (op: string): string =>
  `${ofTransaction(op, 'block_hash')} as block_hash, ${ofBundle(op, 'entry_point')} as entry_point, ${beneficiaryOf(op)} as beneficiary`;

/**
 * Selects ops picked by `inner` (a query over user_ops aliased columns, already ordered and
 * limited) with everything toUserOp needs, keeping the inner order. Each addition is a correlated
 * subquery (an index lookup per op) rather than a join: the answer is the same, and PostgreSQL
 * plans it in two thirds of the time (no join order to search), which was more than it spent
 * executing a single-op lookup.
 */
function selectStored(inner: string): string {
  return `
    select o.*,
      ${ofTransaction('o', 'input')} as input,
      ${keptByBundle('o')},
      o.calls_value::text[] as calls_value_text,
      (select sa.factory from accounts sa where sa.chain_id = o.chain_id and sa.address = o.sender) as sender_factory,
      (select ta.factory from accounts ta where ta.chain_id = o.chain_id and ta.address = o.target) as target_factory,
      (select sa.eip7702 from accounts sa where sa.chain_id = o.chain_id and sa.address = o.sender) as sender_eip7702,
      (select sa.implementation from accounts sa where sa.chain_id = o.chain_id and sa.address = o.sender) as sender_implementation
    from (${inner}) o
    order by o.block_number desc, o.log_index desc`;
}

/** What filling an op's input fields back needs of its row: its version, op_at, its transaction's input. */
type InputFieldsRow = Pick<
  UserOpRow,
  'entry_point_version' | 'op_at' | 'init_code' | 'call_data' | 'paymaster_and_data' | 'signature' | 'account_gas_limits' | 'gas_fees'
> & { input: string | null };

/**
 * The op's input fields (init_code, call_data, paymaster_and_data, signature, account_gas_limits,
 * gas_fees) filled back from its transaction's input when it keeps them there (op_at: migration
 * 0028), read with the indexer's struct layout. Every read of stored ops goes through it.
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

/** A row of selectStored: the op's calls still in their columns (migration 0033). */
type SelectedUserOp = Omit<StoredUserOp, 'calls'> & StoredCallColumns;

/**
 * The ops `inner` picks (selectStored), their input fields and then their calls (slices of their
 * callData) filled back: the one read of stored ops.
 */
async function queryStored(db: Queryable, inner: string, params: unknown[]): Promise<StoredUserOp[]> {
  const { rows } = await db.query<SelectedUserOp>(selectStored(inner), params);
  return rows.map((row) => {
    const op = withInputFields(row);
    return { ...op, calls: callsOfRow(op, op.call_data) };
  });
}

/** The stored ops with these hashes (any order), with everything toUserOp needs. */
export async function listStoredByHashes(db: Queryable, chainId: number, hashes: string[]): Promise<StoredUserOp[]> {
  if (hashes.length === 0) return [];
  const inner = `select * from user_ops where chain_id = $1 and user_op_hash = any($2::bytea[])`;
  return queryStored(db, inner, [chainId, hashes.map((h) => bytea(h))]);
}

/**
 * The block of the bundle transaction whose hash is `txHash` (a bytea parameter, or `any(list)`) on
 * chain $1: the ops of a transaction are found as that block's range of user_ops_latest, as user_ops
 * has no index by transaction (migration 0031). A transaction's ops are all in its block, and the
 * indexer writes its row with them.
 */
const blockOfTransaction = (txHash: string) =>
  `select bt.block_number from bundle_transactions bt where bt.chain_id = $1 and bt.tx_hash = ${txHash}`;

/** A page of the ops matching `where` (fixed SQL with $1..$n placeholders), newest first. */
async function listWhere(db: Queryable, where: string, params: unknown[], page: Page): Promise<UserOp[]> {
  const n = params.length;
  const inner = `select * from user_ops where ${where}
    order by block_number desc, log_index desc limit $${n + 1} offset $${n + 2}`;
  const rows = await queryStored(db, inner, [...params, page.first, page.skip]);
  return rows.map(toUserOp);
}

/** The op with this hash on one network, or null. */
export async function findByHash(db: Queryable, chainId: number, hash: string): Promise<UserOp | null> {
  const rows = await queryStored(db, `select * from user_ops where chain_id = $1 and user_op_hash = $2`, [chainId, bytea(hash)]);
  return rows[0] ? toUserOp(rows[0]) : null;
}

/** The ops with this hash on any of `chainIds` (the same op may exist on several networks). */
export async function listByHash(db: Queryable, chainIds: number[], hash: string): Promise<UserOp[]> {
  const rows = await queryStored(db, `select * from user_ops where user_op_hash = $1 and chain_id = any($2::bigint[])`, [
    bytea(hash),
    chainIds,
  ]);
  return rows.map(toUserOp);
}

export function listLatest(db: Queryable, chainId: number, page: Page): Promise<UserOp[]> {
  return listWhere(db, 'chain_id = $1', [chainId], page);
}

export function listBySender(db: Queryable, chainId: number, sender: string, page: Page): Promise<UserOp[]> {
  return listWhere(db, 'chain_id = $1 and sender = $2', [chainId, bytea(sender)], page);
}

export function listByPaymaster(db: Queryable, chainId: number, paymaster: string, page: Page): Promise<UserOp[]> {
  return listWhere(db, 'chain_id = $1 and paymaster = $2', [chainId, bytea(paymaster)], page);
}

export function listByBundler(db: Queryable, chainId: number, bundler: string, page: Page): Promise<UserOp[]> {
  return listWhere(db, 'chain_id = $1 and bundler = $2', [chainId, bytea(bundler)], page);
}

/**
 * The ops of one transaction: its block's range of user_ops_latest (bundle_transactions names the
 * block), filtered by the hash (migration 0031).
 */
export function listByTransaction(db: Queryable, chainId: number, txHash: string, page: Page): Promise<UserOp[]> {
  return listWhere(db, `chain_id = $1 and block_number = (${blockOfTransaction('$2')}) and tx_hash = $2`, [chainId, bytea(txHash)], page);
}

export function listByBlock(db: Queryable, chainId: number, blockNumber: number, page: Page): Promise<UserOp[]> {
  return listWhere(db, 'chain_id = $1 and block_number = $2', [chainId, blockNumber], page);
}

/** Ops and block time of one block (the count is over the whole block, not a page). */
export async function countInBlock(
  db: Queryable,
  chainId: number,
  blockNumber: number,
): Promise<{ count: number; blockTime: string | null }> {
  const { rows } = await db.query<{ count: string; block_time: string | null }>(
    `select count(*) as count, min(block_time) as block_time from user_ops where chain_id = $1 and block_number = $2`,
    [chainId, blockNumber],
  );
  return { count: Number(rows[0]?.count ?? 0), blockTime: rows[0]?.block_time ?? null };
}

/** Whether an op with this hash exists on the network (searchEntry). */
export async function exists(db: Queryable, chainId: number, hash: string): Promise<boolean> {
  const { rows } = await db.query(`select 1 from user_ops where chain_id = $1 and user_op_hash = $2`, [chainId, bytea(hash)]);
  return rows.length > 0;
}

// Writes (the indexer).

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
  /** The sender is an EIP-7702 delegated EOA (see migration 0006). */
  eip7702: boolean;
  /** v0.9: the paymaster signature suffix of paymasterAndData. */
  paymasterSignature: string | null;
  /** The target of the account's first call (the subgraph's `target`); null when no call was decoded. */
  target: string | null;
  /** The account calls decoded from callData, in order (stored on the op's row as userOpCalls.ts says). */
  calls: AccountCall[];
};

// block_hash and entry_point are its transaction's and bundle's (migration 0034).
const NEW_USER_OP_COLUMNS: ReadonlyArray<Column<StoredForm>> = [
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
  // The calls as migration 0033 keeps them (storedForm); unnest flattens nested arrays: the arrays
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
type StoredForm = NewUserOp & { storedCalls: StoredCalls; beneficiaryUnlikeBundle: string | null };

/**
 * The op as its row stores it: its input fields kept only in its transaction's input (op_at set,
 * the columns null) when they read back from there exactly as decoded; otherwise in its columns
 * (op_at null), as before migration 0028. Its calls' data kept as slices of its callData where
 * they are (migration 0033); its beneficiary only where it is not its bundle's (migration 0034).
 * Reads fill them back (withInputFields, callsOfRow, keptByBundle).
 */
function storedForm(op: NewUserOp, containers: OpContainers): StoredForm {
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

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, ops: NewUserOp[], containers: OpContainers): Promise<void> {
  const rows = ops.map((o) => storedForm(o, containers));
  await copyRows(db, 'user_ops', NEW_USER_OP_COLUMNS, { rows, chainId: chainId });
}

/** Inserts the ops not yet stored; returns the hashes that were new (aggregates count only those). */
export async function insertMany(db: Queryable, chainId: number, ops: NewUserOp[], containers: OpContainers): Promise<Set<string>> {
  if (ops.length === 0) return new Set();
  const { text, values } = unnestInsert(
    'user_ops',
    NEW_USER_OP_COLUMNS,
    { rows: ops.map((o) => storedForm(o, containers)), chainId: chainId },
    'on conflict do nothing returning user_op_hash',
  );
  const { rows } = await db.query<{ user_op_hash: string }>(text, values);
  return new Set(rows.map((r) => r.user_op_hash));
}

/** Sets one op's decoded revert message (a batch written without its chain text puts it back so). */
export async function setRevertMessage(db: Queryable, chainId: number, userOpHash: string, message: string | null): Promise<void> {
  await db.query(`update user_ops set revert_message = $3 where chain_id = $1 and user_op_hash = $2`, [
    chainId,
    bytea(userOpHash),
    message,
  ]);
}

/** Bundle transactions holding ops stored trace_needed, oldest first (the indexer's repair pass). */
export async function listTraceNeededTransactions(
  db: Queryable,
  chainId: number,
  limit: number,
): Promise<Array<{ txHash: string; blockNumber: number; blockHash: string; blockTime: number }>> {
  const { rows } = await db.query<{ tx_hash: string; block_number: string; block_hash: string; block_time: string }>(
    `select o.tx_hash, o.block_number, o.block_time,
       (select bt.block_hash from bundle_transactions bt where bt.chain_id = $1 and bt.tx_hash = o.tx_hash) as block_hash
     from (select tx_hash, min(block_number) as block_number, min(block_time) as block_time
           from user_ops where chain_id = $1 and decode_status = 'trace_needed'
           group by tx_hash order by min(block_number), tx_hash limit $2) o
     order by o.block_number, o.tx_hash`,
    [chainId, limit],
  );
  return rows.map((r) => ({
    txHash: r.tx_hash,
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    blockTime: Number(r.block_time),
  }));
}

/** What decoding the calldata adds to an op stored from its events alone (the repair pass). */
const DECODED_FIELDS = new Set([
  'op_index',
  'op_at',
  'beneficiary_unlike_bundle',
  'aggregator',
  'init_code',
  'call_data',
  'signature',
  'paymaster_and_data',
  'call_gas_limit',
  'verification_gas_limit',
  'pre_verification_gas',
  'max_fee_per_gas',
  'max_priority_fee_per_gas',
  'paymaster_verification_gas_limit',
  'paymaster_post_op_gas_limit',
  'account_gas_limits',
  'gas_fees',
  'decode_status',
  'eip7702',
  'paymaster_signature',
  'target',
  'calls_target',
  'calls_value',
  'calls_data',
  'calls_data_at',
]);

/**
 * Fills in the decoded fields of ops still stored trace_needed (another pass may have done it
 * first); returns the hashes it updated. The EIP-7702 flag is only ever added.
 */
export async function updateDecoded(db: Queryable, chainId: number, ops: NewUserOp[], containers: OpContainers): Promise<Set<string>> {
  if (ops.length === 0) return new Set();
  const stored = ops.map((o) => storedForm(o, containers));
  const columns = NEW_USER_OP_COLUMNS.filter(([name]) => name === 'user_op_hash' || DECODED_FIELDS.has(name));
  const assignments = columns
    .filter(([name]) => name !== 'user_op_hash')
    .map(([name, , , convert], i) => {
      const value = convert ? convert(`v.c${i + 1}`) : `v.c${i + 1}`;
      return name === 'eip7702' ? `eip7702 = u.eip7702 or ${value}` : `${name} = ${value}`;
    });
  const { rows } = await db.query<{ user_op_hash: string }>(
    `update user_ops u set ${assignments.join(', ')}
     from unnest(${columns.map(([, type], i) => `$${i + 2}::${type}[]`).join(', ')}) as v(${columns.map((_, i) => `c${i}`).join(', ')})
     where u.chain_id = $1 and u.user_op_hash = v.c0 and u.decode_status = 'trace_needed'
     returning u.user_op_hash`,
    [chainId, ...columns.map((column) => columnArray(column, { rows: stored, chainId }))],
  );
  return new Set(rows.map((r) => r.user_op_hash));
}

/** What a reorg needs to know about each op it removes (the aggregates they touched). */
export type RemovedUserOp = {
  userOpHash: string;
  sender: string;
  paymaster: string | null;
  bundler: string;
  beneficiary: string | null;
  factory: string | null;
  blockTime: number;
};

/** Deletes the ops above `blockNumber`; returns them. */
export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<RemovedUserOp[]> {
  const { rows } = await db.query<{
    user_op_hash: string;
    sender: string;
    paymaster: string | null;
    bundler: string;
    beneficiary: string | null;
    factory: string | null;
    block_time: string;
  }>(
    // (Before the bundles are deleted: the rollback deletes the ops first.)
    `delete from user_ops o where chain_id = $1 and block_number > $2
     returning user_op_hash, sender, paymaster, bundler, ${beneficiaryOf('o')} as beneficiary, factory, block_time`,
    [chainId, blockNumber],
  );
  return rows.map((r) => ({
    userOpHash: r.user_op_hash,
    sender: r.sender,
    paymaster: r.paymaster,
    bundler: r.bundler,
    beneficiary: r.beneficiary,
    factory: r.factory,
    blockTime: Number(r.block_time),
  }));
}

// The subgraph's UserOp (server/graphql). Fields the op row lacks come from correlated subqueries,
// evaluated only for the fields a query selects.

const gasPrice = 'case when t.actual_gas_used > 0 then div(t.actual_gas_cost, t.actual_gas_used) end';

/**
 * An input field of the op: its column, or, when the op keeps it in its transaction's input
 * (op_at), read from there at its head slot (OP_FIELD_SLOTS; migration 0028's functions).
 */
function inputField(columnName: string, read: 'opscan_op_bytes' | 'opscan_op_word', slots: { v06: number | null; packed: number }): string {
  const slot =
    slots.v06 === null ? `${slots.packed}` : `case when t.entry_point_version = 'v0.6' then ${slots.v06} else ${slots.packed} end`;
  const fromInput = `(select ${read}(bt.input, t.op_at, ${slot}) from bundle_transactions bt where bt.chain_id = t.chain_id and bt.tx_hash = t.tx_hash)`;
  // v0.6 ops have no packed gas words: null there, as the column was.
  const guarded = slots.v06 === null ? `case when t.entry_point_version <> 'v0.6' then ${fromInput} end` : fromInput;
  return `coalesce(t.${columnName}, case when t.op_at is not null then ${guarded} end)`;
}
const { v06, packed } = OP_FIELD_SLOTS;
const postOpReverted = "t.failure = 'postop_reverted'";

export const userOpView: EntityView = {
  from: 'user_ops t',
  block: 't.block_number',
  id: hashIndexId('t.user_op_hash', 't.log_index', 'bytea'),
  fields: {
    userOpHash: column('t.user_op_hash', 'Bytes', 'bytea'),
    // Found through the transaction's block (user_ops has no index by transaction: migration 0031).
    transactionHash: {
      ...column('t.tx_hash', 'Bytes', 'bytea'),
      equals: (param) => `(t.tx_hash = ${param} and t.block_number = (${blockOfTransaction(param)}))`,
      equalsAny: (param) => `(t.tx_hash = any(${param}) and t.block_number in (${blockOfTransaction(`any(${param})`)}))`,
    },
    sender: column('t.sender', 'Bytes', 'bytea'),
    // The first call's target, kept on the op (migration 0017) so that it filters and sorts like the sender.
    target: column('t.target', 'Bytes', 'bytea', true),
    // The first decoded call's value (null without calls; calls_value is null when every value is zero).
    value: column(firstCallValueSql, 'BigInt', 'numeric', true),
    // The EntryPoint's event names the zero address when an op had no paymaster; so does the subgraph.
    paymaster: {
      ...column(`coalesce(t.paymaster, ${byteaLiteral(ZERO_ADDRESS)})`, 'Bytes', 'bytea'),
      equals: (param) => `(t.paymaster = ${param} or (t.paymaster is null and ${param} = ${byteaLiteral(ZERO_ADDRESS)}))`,
    },
    nonce: column('t.nonce', 'BigInt', 'numeric'),
    success: column('t.success', 'Boolean', 'bool'),
    actualGasCost: column('t.actual_gas_cost', 'BigInt', 'numeric'),
    actualGasUsed: column('t.actual_gas_used', 'BigInt', 'numeric'),
    actualGasPrice: column(gasPrice, 'BigInt', 'numeric', true),
    gasPrice: column(gasPrice, 'BigInt', 'numeric', true),
    revertReason: column(`case when ${postOpReverted} then null else t.revert_reason end`, 'Bytes', 'bytea', true),
    paymasterRevertReason: column(`case when ${postOpReverted} then t.revert_reason end`, 'Bytes', 'bytea', true),
    // Block time never decreases along the chain: the (indexed) block number sorts like it.
    blockTime: { ...column('t.block_time', 'BigInt', 'int8'), order: 't.block_number' },
    blockNumber: column('t.block_number', 'BigInt', 'int8'),
    logIndex: column('t.log_index', 'Int', 'int4'),
    bundleIndex: column('t.bundle_index', 'Int', 'int4'),
    input: column(ofTransaction('t', 'input'), 'Bytes', 'bytea', true),
    callData: column(inputField('call_data', 'opscan_op_bytes', { v06: v06.callData, packed: packed.callData }), 'Bytes', 'bytea', true),
    beneficiary: column(beneficiaryOf('t'), 'Bytes', 'bytea', true),
    bundler: column('t.bundler', 'Bytes', 'bytea'),
    // The subgraph answers `0x` for an op that deployed nothing.
    factory: column(`coalesce(t.factory, ${byteaLiteral('0x')})`, 'Bytes', 'bytea'),
    initCode: column(inputField('init_code', 'opscan_op_bytes', { v06: v06.initCode, packed: packed.initCode }), 'Bytes', 'bytea', true),
    signature: column(inputField('signature', 'opscan_op_bytes', { v06: v06.signature, packed: packed.signature }), 'Bytes', 'bytea', true),
    paymasterAndData: column(
      inputField('paymaster_and_data', 'opscan_op_bytes', { v06: v06.paymasterAndData, packed: packed.paymasterAndData }),
      'Bytes',
      'bytea',
      true,
    ),
    callGasLimit: column('t.call_gas_limit', 'BigInt', 'numeric', true),
    verificationGasLimit: column('t.verification_gas_limit', 'BigInt', 'numeric', true),
    preVerificationGas: column('t.pre_verification_gas', 'BigInt', 'numeric', true),
    maxFeePerGas: column('t.max_fee_per_gas', 'BigInt', 'numeric', true),
    maxPriorityFeePerGas: column('t.max_priority_fee_per_gas', 'BigInt', 'numeric', true),
    accountGasLimits: column(
      inputField('account_gas_limits', 'opscan_op_word', { v06: null, packed: packed.accountGasLimits }),
      'Bytes',
      'bytea',
      true,
    ),
    gasFees: column(inputField('gas_fees', 'opscan_op_word', { v06: null, packed: packed.gasFees }), 'Bytes', 'bytea', true),
    // As toUserOp: the op's gas limits summed (v0.7+ adds the paymaster's), null until decoded.
    gasLimit: column(
      `t.call_gas_limit + t.verification_gas_limit + t.pre_verification_gas + case when t.entry_point_version = 'v0.6' then 0
         else coalesce(t.paymaster_verification_gas_limit, 0) + coalesce(t.paymaster_post_op_gas_limit, 0) end`,
      'BigInt',
      'numeric',
      true,
    ),
    // Not recorded per op (the subgraph's is the block's base fee).
    baseFeePerGas: column('null::numeric', 'BigInt', 'numeric', true),
    entryPoint: column(ofBundle('t', 'entry_point'), 'Bytes', 'bytea'),
    entryPointVersion: column('t.entry_point_version', 'String', 'text'),
  },
};
