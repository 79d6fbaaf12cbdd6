/**
 * Reads of `user_ops` for the REST and tRPC endpoints, the RPC methods, the webhook payloads and the
 * status page: each op with what an answer needs from `bundle_transactions` and `accounts`, its
 * stored form unpacked (storedForm.ts) and mapped to the spec's UserOp (toUserOp); and the indexer's
 * list of transactions whose ops wait for a trace.
 */
import { bytea, type Queryable } from '../../client.js';
import type { Page } from '../../page.js';
import type { UserOp } from '../../../models/userOp.js';
import { toUserOp } from '../../../models/userOpOfStored.js';
import { callsOfRow, type StoredCallColumns } from '../userOpCalls.js';
import { blockOfTransaction, keptByBundle, ofTransaction, withInputFields, type StoredUserOp } from './storedForm.js';

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

/** A row of selectStored: the op's calls still in their columns (StoredCallColumns). */
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
 * block), filtered by the hash.
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

/**
 * The EntryPoint's verdict on each failed op of these hashes (its revert event's kind and data), by
 * hash; ops that succeeded are absent.
 */
export async function listFailures(
  db: Queryable,
  chainId: number,
  hashes: string[],
): Promise<Map<string, { failure: string; revertReason: string | null }>> {
  if (hashes.length === 0) return new Map();
  const { rows } = await db.query<{ user_op_hash: string; failure: string; revert_reason: string | null }>(
    `select user_op_hash, failure, revert_reason from user_ops
     where chain_id = $1 and user_op_hash = any($2::bytea[]) and failure is not null`,
    [chainId, hashes.map((h) => bytea(h))],
  );
  return new Map(rows.map((r) => [r.user_op_hash, { failure: r.failure, revertReason: r.revert_reason }]));
}

/** Whether an op with this hash exists on the network (searchEntry). */
export async function exists(db: Queryable, chainId: number, hash: string): Promise<boolean> {
  const { rows } = await db.query(`select 1 from user_ops where chain_id = $1 and user_op_hash = $2`, [chainId, bytea(hash)]);
  return rows.length > 0;
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
