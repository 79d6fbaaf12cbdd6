import { storableJson } from '../../chainText.js';
import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { unnestInsert, type Column } from '../unnest.js';

/**
 * Reads of `user_op_traces`: each op's callTracer subtree, or why there is none. A trace is the
 * node's JSON, its strings (a frame's `error`, geth's `revertReason`) kept under the rule for text
 * from the chain (shared/chainText.ts).
 */

/** A geth callTracer frame as stored. */
export type CallFrame = {
  type?: string;
  from?: string;
  to?: string;
  input?: string;
  output?: string;
  gas?: string;
  gasUsed?: string;
  value?: string;
  /** Why the frame failed ("execution reverted", "out of gas"); absent when it succeeded. */
  error?: string;
  calls?: CallFrame[];
};

export type UserOpTrace = { status: 'ok' | 'unavailable'; trace: CallFrame | null };

export async function find(db: Queryable, chainId: number, userOpHash: string): Promise<UserOpTrace | null> {
  const { rows } = await db.query<{ status: 'ok' | 'unavailable'; trace: CallFrame | null }>(
    `select status, trace from user_op_traces where chain_id = $1 and user_op_hash = $2`,
    [chainId, bytea(userOpHash)],
  );
  return rows[0] ? { status: rows[0].status, trace: rows[0].trace } : null;
}

/** The stored traces (status ok) of these ops, by hash. */
export async function findMany(db: Queryable, chainId: number, userOpHashes: string[]): Promise<Map<string, CallFrame>> {
  if (userOpHashes.length === 0) return new Map();
  const { rows } = await db.query<{ user_op_hash: string; trace: CallFrame }>(
    `select user_op_hash, trace from user_op_traces
     where chain_id = $1 and user_op_hash = any($2::bytea[]) and status = 'ok' and trace is not null`,
    [chainId, userOpHashes.map((h) => bytea(h))],
  );
  return new Map(rows.map((r) => [r.user_op_hash, r.trace]));
}

// Writes (the indexer).

export type NewUserOpTrace = { userOpHash: string; status: 'ok' | 'unavailable'; trace: unknown };

const NEW_COLUMNS: ReadonlyArray<Column<NewUserOpTrace>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['user_op_hash', 'bytea', (t) => t.userOpHash],
  ['status', 'text', (t) => t.status],
  ['trace', 'text', (t) => (t.trace === null ? null : storableJson(t.trace)), (v) => `${v}::jsonb`],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, traces: NewUserOpTrace[]): Promise<void> {
  await copyRows(db, 'user_op_traces', NEW_COLUMNS, { rows: traces, chainId: chainId });
}

/** Inserts the traces not stored yet. */
export async function insertMany(db: Queryable, chainId: number, traces: NewUserOpTrace[]): Promise<void> {
  if (traces.length === 0) return;
  const { text, values } = unnestInsert('user_op_traces', NEW_COLUMNS, { rows: traces, chainId: chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

/**
 * Stores execution traces read after the op was indexed (the web process on first request, the
 * repair pass): replaces an `unavailable` row, keeps an `ok` one, and skips ops no longer stored
 * (a reorg removed them meanwhile).
 */
export async function storeTraced(db: Queryable, chainId: number, traces: Array<{ userOpHash: string; trace: CallFrame }>): Promise<void> {
  if (traces.length === 0) return;
  await db.query(
    `insert into user_op_traces (chain_id, user_op_hash, status, trace)
     select $1, u.hash, 'ok', u.trace::jsonb from unnest($2::bytea[], $3::text[]) as u(hash, trace)
     where exists (select 1 from user_ops o where o.chain_id = $1 and o.user_op_hash = u.hash)
     on conflict (chain_id, user_op_hash) do update set status = 'ok', trace = excluded.trace where user_op_traces.status <> 'ok'`,
    [chainId, traces.map((t) => bytea(t.userOpHash)), traces.map((t) => storableJson(t.trace))],
  );
}

/** Stores one op's trace over its row (a batch written without its chain text puts it back so). */
export async function setTrace(db: Queryable, chainId: number, userOpHash: string, trace: unknown): Promise<void> {
  await db.query(`update user_op_traces set status = 'ok', trace = $3::jsonb where chain_id = $1 and user_op_hash = $2`, [
    chainId,
    bytea(userOpHash),
    storableJson(trace),
  ]);
}

export async function deleteByUserOps(db: Queryable, chainId: number, userOpHashes: string[]): Promise<void> {
  if (userOpHashes.length === 0) return;
  await db.query(`delete from user_op_traces where chain_id = $1 and user_op_hash = any($2::bytea[])`, [
    chainId,
    userOpHashes.map((h) => bytea(h)),
  ]);
}
