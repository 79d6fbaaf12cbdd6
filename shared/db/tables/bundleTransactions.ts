import { bytea, prepared, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';
import { packLogs, unpackLogs, type TransactionLog } from './logs.js';
import { storableJson } from '../../chainText.js';

/**
 * Reads of `bundle_transactions`: the transactions that carry at least one bundle. Their logs, kept
 * here packed, are read through logs.ts.
 */

export type BundleTransaction = {
  txHash: string;
  blockNumber: string;
  blockHash: string;
  blockTime: string;
  txIndex: number;
  from: string;
  to: string | null;
  input: string;
  status: boolean;
  gasUsed: string;
  effectiveGasPrice: string;
  /** Wei paid for the transaction, the L1 data fee included. */
  fee: string;
  /** OP-stack L1 data fee (part of `fee`); null where the chain reports none. */
  l1Fee: string | null;
  /** Ops in the transaction, over all its bundles. */
  userOpsCount: number;
};

type BundleTransactionRow = {
  tx_hash: string;
  block_number: string;
  block_hash: string;
  block_time: string;
  tx_index: number;
  tx_from: string;
  tx_to: string | null;
  input: string;
  status: boolean;
  gas_used: string;
  effective_gas_price: string;
  fee: string;
  l1_fee: string | null;
  ops_count: string;
};

export const toBundleTransaction = (r: BundleTransactionRow): BundleTransaction => ({
  txHash: r.tx_hash,
  blockNumber: r.block_number,
  blockHash: r.block_hash,
  blockTime: r.block_time,
  txIndex: r.tx_index,
  from: r.tx_from,
  to: r.tx_to,
  input: r.input,
  status: r.status,
  gasUsed: r.gas_used,
  effectiveGasPrice: r.effective_gas_price,
  fee: r.fee,
  l1Fee: r.l1_fee,
  userOpsCount: Number(r.ops_count),
});

const COLUMNS = `bt.tx_hash, bt.block_number, bt.block_hash, bt.block_time, bt.tx_index, bt.tx_from, bt.tx_to, bt.input, bt.status,
  bt.gas_used, bt.effective_gas_price, bt.fee, bt.l1_fee,
  (select coalesce(sum(b.ops_count), 0) from bundles b where b.chain_id = bt.chain_id and b.tx_hash = bt.tx_hash) as ops_count`;

export async function findByHash(db: Queryable, chainId: number, txHash: string): Promise<BundleTransaction | null> {
  const { rows } = await db.query<BundleTransactionRow>(
    `select ${COLUMNS} from bundle_transactions bt where bt.chain_id = $1 and bt.tx_hash = $2`,
    [chainId, bytea(txHash)],
  );
  return rows[0] ? toBundleTransaction(rows[0]) : null;
}

export async function exists(db: Queryable, chainId: number, txHash: string): Promise<boolean> {
  const { rows } = await db.query(`select 1 from bundle_transactions where chain_id = $1 and tx_hash = $2`, [chainId, bytea(txHash)]);
  return rows.length > 0;
}

/** Which of `txHashes` are stored bundle transactions. */
export async function listStored(db: Queryable, chainId: number, txHashes: string[]): Promise<Set<string>> {
  if (txHashes.length === 0) return new Set();
  const { rows } = await db.query<{ tx_hash: string }>(
    `select tx_hash from bundle_transactions where chain_id = $1 and tx_hash = any($2::bytea[])`,
    [chainId, txHashes.map((h) => bytea(h))],
  );
  return new Set(rows.map((r) => r.tx_hash));
}

/**
 * The blocks holding stored bundle transactions at or below `number`, highest first, by the hash
 * stored with them: below the stored headers, what the indexer compares with the chain to find
 * where a deep reorg began (indexer/sync/findCommonAncestor.ts).
 */
export async function listBlocksUpTo(
  db: Queryable,
  chainId: number,
  number: number,
  limit: number,
): Promise<Array<{ number: number; hash: string }>> {
  const { rows } = await db.query<{ block_number: string; block_hash: string }>(
    `select block_number, block_hash from bundle_transactions where chain_id = $1 and block_number <= $2
      group by block_number, block_hash order by block_number desc limit $3`,
    [chainId, number, limit],
  );
  return rows.map((r) => ({ number: Number(r.block_number), hash: r.block_hash }));
}

// Writes (the indexer).

export type NewBundleTransaction = {
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
  /** gasUsed × effectiveGasPrice + l1Fee: what the sender paid. */
  fee: bigint;
  l1Fee: bigint | null;
  /** Block-level index of the first of `logs` (0 when there are none). */
  firstLogIndex: number;
  /** The receipt's logs, in order (stored packed: logs.ts). */
  logs: TransactionLog[];
  /** The receipt's cumulativeGasUsed and type (null where the node sent none). */
  cumulativeGasUsed: bigint | null;
  type: number | null;
  /** The receipt's fields no column keeps (receiptRest), as the node sent them; null when there are none. */
  receiptRest: Record<string, unknown> | null;
};

/**
 * The receipt fields that the columns and the packed logs give back (logsBloom is computed from
 * the logs; contractAddress is null for every transaction with a `to`). Every other field the node
 * sends (a chain's own, such as an OP-stack chain's L1 fee fields, or a node's blobGasPrice and
 * blockTimestamp) is kept in receipt_rest as sent, so that the ERC-4337 RPC answers the receipt
 * as the node gave it.
 */
const RECEIPT_FIELDS_IN_COLUMNS = new Set([
  'transactionHash',
  'transactionIndex',
  'blockHash',
  'blockNumber',
  'from',
  'to',
  'status',
  'gasUsed',
  'effectiveGasPrice',
  'cumulativeGasUsed',
  'type',
  'logs',
  'logsBloom',
]);

/** The fields of a node's receipt that receipt_rest keeps (null: none). */
export function receiptRest(receipt: object): Record<string, unknown> | null {
  const rest = Object.entries(receipt).filter(
    ([field, value]) => !RECEIPT_FIELDS_IN_COLUMNS.has(field) && !(field === 'contractAddress' && value === null),
  );
  return rest.length > 0 ? Object.fromEntries(rest) : null;
}

const NEW_COLUMNS: ReadonlyArray<Column<NewBundleTransaction>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['tx_hash', 'bytea', (t) => t.txHash],
  ['block_number', 'bigint', (t) => t.blockNumber],
  ['block_hash', 'bytea', (t) => t.blockHash],
  ['block_time', 'bigint', (t) => t.blockTime],
  ['tx_index', 'integer', (t) => t.txIndex],
  ['tx_from', 'bytea', (t) => t.from],
  ['tx_to', 'bytea', (t) => t.to],
  ['input', 'bytea', (t) => t.input],
  ['status', 'boolean', (t) => t.status],
  ['gas_used', 'numeric', (t) => numeric(t.gasUsed)],
  ['effective_gas_price', 'numeric', (t) => numeric(t.effectiveGasPrice)],
  ['fee', 'numeric', (t) => numeric(t.fee)],
  ['l1_fee', 'numeric', (t) => numeric(t.l1Fee)],
  ['first_log_index', 'integer', (t) => t.firstLogIndex],
  ['logs', 'bytea', (t) => packLogs(t.logs)],
  ['cumulative_gas_used', 'numeric', (t) => numeric(t.cumulativeGasUsed)],
  ['tx_type', 'smallint', (t) => t.type],
  ['receipt_rest', 'text', (t) => (t.receiptRest === null ? null : storableJson(t.receiptRest)), (v) => `${v}::jsonb`],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, txs: NewBundleTransaction[]): Promise<void> {
  await copyRows(db, 'bundle_transactions', NEW_COLUMNS, { rows: txs, chainId: chainId });
}

/** Inserts the transactions not yet stored; returns the hashes that were new. */
export async function insertMany(db: Queryable, chainId: number, txs: NewBundleTransaction[]): Promise<Set<string>> {
  if (txs.length === 0) return new Set();
  const { text, values } = unnestInsert(
    'bundle_transactions',
    NEW_COLUMNS,
    { rows: txs, chainId: chainId },
    'on conflict do nothing returning tx_hash',
  );
  const { rows } = await db.query<{ tx_hash: string }>(text, values);
  return new Set(rows.map((r) => r.tx_hash));
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from bundle_transactions where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}

// Reads of the ERC-4337 RPC (server/rpc).

/** A bundle transaction's receipt as stored (receiptRest: the node's other fields as sent). */
export type StoredReceipt = {
  txHash: string;
  blockNumber: string;
  blockHash: string;
  txIndex: number;
  /** Its block's time, for the logs' blockTimestamp, where the node wrote one (null: it did not). */
  blockTimestamp: string | null;
  from: string;
  to: string | null;
  status: boolean;
  gasUsed: string;
  effectiveGasPrice: string;
  cumulativeGasUsed: string | null;
  type: number | null;
  rest: Record<string, unknown> | null;
  firstLogIndex: number;
  logs: TransactionLog[];
};

type StoredReceiptRow = {
  tx_hash: string;
  block_number: string;
  block_hash: string;
  block_time: string;
  tx_index: number;
  tx_from: string;
  tx_to: string | null;
  status: boolean;
  gas_used: string;
  effective_gas_price: string;
  cumulative_gas_used: string | null;
  tx_type: number | null;
  receipt_rest: Record<string, unknown> | null;
  first_log_index: number;
  logs: string;
};

/** Per op asked for, the receipt of the latest transaction holding it (a hash included twice: its last inclusion). */
const RECEIPTS_OF_USER_OPS = prepared(`select distinct on (o.user_op_hash) o.user_op_hash, bt.tx_hash, bt.block_number, bt.block_hash,
    bt.block_time, bt.tx_index, bt.tx_from, bt.tx_to, bt.status, bt.gas_used, bt.effective_gas_price, bt.cumulative_gas_used, bt.tx_type,
    bt.receipt_rest, bt.first_log_index, bt.logs
  from user_ops o
  join bundle_transactions bt on bt.chain_id = o.chain_id and bt.tx_hash = o.tx_hash
  where o.chain_id = $1 and o.user_op_hash = any($2::bytea[])
  order by o.user_op_hash, o.block_number desc, o.log_index desc`);

/** The stored receipts of the transactions holding the ops `userOpHashes`, by op hash (absent: not held). */
export async function listReceiptsOfUserOps(db: Queryable, chainId: number, userOpHashes: string[]): Promise<Map<string, StoredReceipt>> {
  if (userOpHashes.length === 0) return new Map();
  const { rows } = await db.query<StoredReceiptRow & { user_op_hash: string }>(RECEIPTS_OF_USER_OPS, [
    chainId,
    userOpHashes.map((h) => bytea(h)),
  ]);
  return new Map(
    rows.map((r) => [
      r.user_op_hash,
      {
        txHash: r.tx_hash,
        blockNumber: r.block_number,
        blockHash: r.block_hash,
        txIndex: r.tx_index,
        // A node that writes blockTimestamp on its receipts (kept in receipt_rest) writes it on their logs.
        blockTimestamp: r.receipt_rest && 'blockTimestamp' in r.receipt_rest ? r.block_time : null,
        from: r.tx_from,
        to: r.tx_to,
        status: r.status,
        gasUsed: r.gas_used,
        effectiveGasPrice: r.effective_gas_price,
        cumulativeGasUsed: r.cumulative_gas_used,
        type: r.tx_type,
        rest: r.receipt_rest,
        firstLogIndex: r.first_log_index,
        logs: unpackLogs(r.logs),
      },
    ]),
  );
}
