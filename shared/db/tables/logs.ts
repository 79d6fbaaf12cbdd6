import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { unnestInsert, type Column } from '../unnest.js';
import type { Log } from '../../models/log.js';

/**
 * Reads of `logs`: every log of every bundle transaction. Event names are left null here; the API
 * decodes the events it knows.
 */

type LogRow = {
  tx_hash: string;
  log_index: number;
  tx_log_index: number;
  block_number: string;
  address: string;
  topics: string[];
  data: string;
  user_op_hash: string | null;
};

export const toLog = (r: LogRow): Log => ({
  logIndex: String(r.log_index),
  transactionHash: r.tx_hash,
  transactionLogIndex: String(r.tx_log_index),
  topics: r.topics,
  // Only canonical logs are stored: a reorg deletes the rows of the blocks it replaced.
  removed: false,
  data: r.data,
  address: r.address,
  event_name: null,
  eventName: null,
  blockNumber: r.block_number,
  userOpHash: r.user_op_hash,
});

const COLUMNS = 'tx_hash, log_index, tx_log_index, block_number, address, topics, data, user_op_hash';

/** The logs of an op's execution slice, in order. */
export async function listByUserOp(db: Queryable, chainId: number, userOpHash: string): Promise<Log[]> {
  const { rows } = await db.query<LogRow>(`select ${COLUMNS} from logs where chain_id = $1 and user_op_hash = $2 order by log_index`, [
    chainId,
    bytea(userOpHash),
  ]);
  return rows.map(toLog);
}

/** The log at a block-level index in a transaction, or null. */
export async function find(db: Queryable, chainId: number, txHash: string, logIndex: number): Promise<Log | null> {
  const { rows } = await db.query<LogRow>(`select ${COLUMNS} from logs where chain_id = $1 and tx_hash = $2 and log_index = $3`, [
    chainId,
    bytea(txHash),
    logIndex,
  ]);
  return rows[0] ? toLog(rows[0]) : null;
}

// Writes (the indexer).

export type NewLog = {
  txHash: string;
  logIndex: number;
  txLogIndex: number;
  blockNumber: number;
  address: string;
  topics: string[];
  data: string;
  userOpHash: string | null;
};

const NEW_COLUMNS: ReadonlyArray<Column<NewLog>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['tx_hash', 'bytea', (l) => l.txHash],
  ['log_index', 'integer', (l) => l.logIndex],
  ['tx_log_index', 'integer', (l) => l.txLogIndex],
  ['block_number', 'bigint', (l) => l.blockNumber],
  ['address', 'bytea', (l) => l.address],
  // unnest flattens nested arrays: topics travel as a bytea[] literal, each element bytea's text
  // input (`\x…`, its backslash escaped for the array literal).
  ['topics', 'text', (l) => `{${l.topics.map((topic) => `\\\\x${topic.slice(2)}`).join(',')}}`, (v) => `${v}::bytea[]`],
  ['data', 'bytea', (l) => l.data],
  ['user_op_hash', 'bytea', (l) => l.userOpHash],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, logs: NewLog[]): Promise<void> {
  await copyRows(db, 'logs', NEW_COLUMNS, { rows: logs, chainId: chainId });
}

/** Inserts the logs not stored yet. */
export async function insertMany(db: Queryable, chainId: number, logs: NewLog[]): Promise<void> {
  if (logs.length === 0) return;
  const { text, values } = unnestInsert('logs', NEW_COLUMNS, { rows: logs, chainId: chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from logs where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}
