import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';

/** `user_op_calls`: the account calls decoded from each op's callData (execute / executeBatch / ERC-7579). */

export type NewUserOpCall = { userOpHash: string; callIndex: number; target: string; value: bigint; data: string };

const COLUMNS: ReadonlyArray<Column<NewUserOpCall>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['user_op_hash', 'bytea', (c) => c.userOpHash],
  ['call_index', 'integer', (c) => c.callIndex],
  ['target', 'bytea', (c) => c.target],
  ['value', 'numeric', (c) => numeric(c.value)],
  ['data', 'bytea', (c) => c.data],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, calls: NewUserOpCall[]): Promise<void> {
  await copyRows(db, 'user_op_calls', COLUMNS, { rows: calls, chainId: chainId });
}

/** Inserts the calls not stored yet. */
export async function insertMany(db: Queryable, chainId: number, calls: NewUserOpCall[]): Promise<void> {
  if (calls.length === 0) return;
  const { text, values } = unnestInsert('user_op_calls', COLUMNS, { rows: calls, chainId: chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

export async function deleteByUserOps(db: Queryable, chainId: number, userOpHashes: string[]): Promise<void> {
  if (userOpHashes.length === 0) return;
  await db.query(`delete from user_op_calls where chain_id = $1 and user_op_hash = any($2::bytea[])`, [
    chainId,
    userOpHashes.map((h) => bytea(h)),
  ]);
}
