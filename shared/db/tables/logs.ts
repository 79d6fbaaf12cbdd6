import { bytea, prepared, type Queryable } from '../client.js';
import type { Log } from '../../models/log.js';

/**
 * The logs of bundle transactions: every receipt log, kept with its transaction
 * (bundle_transactions.logs, packed by packLogs) rather than a row each. Which op a
 * log belongs to is not stored: logOwners derives it from the ops of the transaction, for the
 * indexer and for these reads alike. Event names are left null here; the API decodes the events
 * it knows.
 */

/** A receipt log as packed: addresses, topics and data lower-case 0x-hex. */
export type TransactionLog = { address: string; topics: string[]; data: string };

const hexOfCount = (count: number, bytes: number): string => count.toString(16).padStart(bytes * 2, '0');

/**
 * A transaction's logs in receipt order as one byte string, per log: address (20 bytes), topic
 * count (1 byte), the topics (32 bytes each), data length (4 bytes, big-endian), data. The same
 * bytes the migration that packs the logs builds in SQL from the `logs` rows it replaces.
 */
export function packLogs(logs: readonly TransactionLog[]): string {
  const parts = ['0x'];
  for (const log of logs) {
    if (log.address.length !== 42 || log.topics.length > 4 || log.topics.some((topic) => topic.length !== 66)) {
      throw new Error(`a log of address ${log.address} cannot be packed: a 20-byte address and at most 4 topics of 32 bytes expected`);
    }
    parts.push(log.address.slice(2), hexOfCount(log.topics.length, 1));
    for (const topic of log.topics) parts.push(topic.slice(2));
    parts.push(hexOfCount((log.data.length - 2) / 2, 4), log.data.slice(2));
  }
  return parts.join('');
}

/** packLogs' bytes (as the 0x-hex a bytea is read as) → the logs. */
export function unpackLogs(packed: string): TransactionLog[] {
  const logs: TransactionLog[] = [];
  // Offsets in hex characters, past the 0x.
  let at = 2;
  while (at < packed.length) {
    const address = `0x${packed.slice(at, at + 40)}`;
    const topicCount = parseInt(packed.slice(at + 40, at + 42), 16);
    at += 42;
    const topics: string[] = [];
    for (let i = 0; i < topicCount; i++, at += 64) topics.push(`0x${packed.slice(at, at + 64)}`);
    const dataChars = parseInt(packed.slice(at, at + 8), 16) * 2;
    at += 8;
    logs.push({ address, topics, data: `0x${packed.slice(at, at + dataChars)}` });
    at += dataChars;
  }
  return logs;
}

/** Where an op's logs are: its UserOperationEvent's log index and its execution slice [execLogFrom, execLogTo). */
export type OpLogSlice = { userOpHash: string; logIndex: number; execLogFrom: number | null; execLogTo: number | null };

/**
 * The op each log of a transaction belongs to (by transaction-level index; null: none, such as
 * BeforeExecution or an op's own event): the op whose execution slice holds it. A bundle nested in
 * an op's execution puts its ops' slices inside the outer op's, and an inner op's event precedes
 * the outer op's: so ops are taken by their event's index, and the first whose slice holds a log
 * claims it. `ops` may leave out ops whose event comes after every op asked about: they claim
 * nothing before them.
 */
export function logOwners(ops: readonly OpLogSlice[], firstLogIndex: number, logCount: number): Array<string | null> {
  const owners = new Array<string | null>(logCount).fill(null);
  for (const op of [...ops].sort((a, b) => a.logIndex - b.logIndex)) {
    const from = Math.max(op.execLogFrom ?? 0, firstLogIndex);
    const to = Math.min(op.execLogTo ?? 0, firstLogIndex + logCount);
    for (let i = from; i < to; i++) owners[i - firstLogIndex] ??= op.userOpHash;
  }
  return owners;
}

/** A bundle transaction's packed logs and the ops that may claim them (arrays in the same order). */
type TransactionLogsRow = {
  tx_hash: string;
  block_number: string;
  first_log_index: number;
  logs: string;
  op_hashes: string[] | null;
  op_log_indexes: number[] | null;
  op_exec_log_froms: Array<number | null> | null;
  op_exec_log_tos: Array<number | null> | null;
};

/**
 * The ops of the transaction whose hash (as user_ops stores it) is `txHash`, in block `blockNumber`,
 * on chain $1, as arrays in one row: its block's range of user_ops_latest (user_ops has no index by
 * transaction: a transaction's ops are all in its block); `where` narrows them (see logOwners).
 */
const opsOfTransaction = (txHash: string, blockNumber: string, where = 'true') => `
  (select array_agg(s.user_op_hash) as op_hashes, array_agg(s.log_index) as op_log_indexes,
          array_agg(s.exec_log_from) as op_exec_log_froms, array_agg(s.exec_log_to) as op_exec_log_tos
   from user_ops s
   where s.chain_id = $1 and s.block_number = ${blockNumber} and s.tx_hash = ${txHash} and ${where}) ops`;

/** The transaction's logs as answered, each with its op. */
function logsOf(r: TransactionLogsRow): Log[] {
  const ops = (r.op_hashes ?? []).map((userOpHash, i) => ({
    userOpHash,
    logIndex: r.op_log_indexes![i]!,
    execLogFrom: r.op_exec_log_froms![i] ?? null,
    execLogTo: r.op_exec_log_tos![i] ?? null,
  }));
  const logs = unpackLogs(r.logs);
  const owners = logOwners(ops, r.first_log_index, logs.length);
  return logs.map((log, i) => ({
    logIndex: String(r.first_log_index + i),
    transactionHash: r.tx_hash,
    transactionLogIndex: String(i),
    topics: log.topics,
    // Only canonical logs are stored: a reorg deletes the transactions of the blocks it replaced.
    removed: false,
    data: log.data,
    address: log.address,
    event_name: null,
    eventName: null,
    blockNumber: r.block_number,
    userOpHash: owners[i] ?? null,
  }));
}

/**
 * Both reads are prepared: planning the join and the ops' look-up took longer than running them
 * (0.25 ms against 0.13 ms on the previous release's fixture).
 */
const LIST_BY_USER_OP = prepared(`select bt.tx_hash, bt.block_number, bt.first_log_index, bt.logs, ops.*
  from user_ops o
  join bundle_transactions bt on bt.chain_id = o.chain_id and bt.tx_hash = o.tx_hash
  -- Only ops whose event precedes the op's can claim its logs first.
  cross join lateral ${opsOfTransaction('o.tx_hash', 'o.block_number', 's.log_index <= o.log_index')}
  where o.chain_id = $1 and o.user_op_hash = $2`);

const FIND = prepared(`select bt.tx_hash, bt.block_number, bt.first_log_index, bt.logs, ops.*
  from bundle_transactions bt
  cross join lateral ${opsOfTransaction('bt.tx_hash', 'bt.block_number')}
  where bt.chain_id = $1 and bt.tx_hash = $2 and bt.first_log_index <= $3`);

/** The logs of an op's execution slice that are its own (not an inner op's), in order. */
export async function listByUserOp(db: Queryable, chainId: number, userOpHash: string): Promise<Log[]> {
  const { rows } = await db.query<TransactionLogsRow>(LIST_BY_USER_OP, [chainId, bytea(userOpHash)]);
  return rows.flatMap(logsOf).filter((log) => log.userOpHash === userOpHash);
}

/** The log at a block-level index in a transaction, or null. */
export async function find(db: Queryable, chainId: number, txHash: string, logIndex: number): Promise<Log | null> {
  const { rows } = await db.query<TransactionLogsRow>(FIND, [chainId, bytea(txHash), logIndex]);
  return rows.flatMap(logsOf).find((log) => log.logIndex === String(logIndex)) ?? null;
}
