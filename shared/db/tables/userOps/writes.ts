/**
 * Writes of `user_ops`, all the indexer's: appending and inserting ops in their stored form
 * (storedForm.ts), filling in what decoding adds to ops stored from their events alone, setting a
 * revert message, and deleting the ops a reorg removes.
 */
import { bytea, type Queryable } from '../../client.js';
import { copyRows } from '../../copy.js';
import { columnArray, unnestInsert } from '../../unnest.js';
import { beneficiaryOf, NEW_USER_OP_COLUMNS, storedForm, type NewUserOp, type OpContainers } from './storedForm.js';

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
