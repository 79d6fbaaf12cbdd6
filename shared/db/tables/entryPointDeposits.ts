import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';
import { column, hashIndexId, type EntityView } from '../entityView.js';

/** Reads of `entry_point_deposits`: EntryPoint stake-manager events. */

/**
 * The deposit (wei, null when none) as of the latest Deposited event of `account` (SQL of a bytea
 * value, e.g. a column of the outer row) on chain `chainId` (SQL): a correlated subquery, so that a
 * statement listing entities answers their deposits too, without a second round trip.
 */
export const latestTotalDepositSql = (chainId: string, account: string) =>
  `(select d.total_deposit from entry_point_deposits d where d.chain_id = ${chainId} and d.account = ${account}
      and d.event = 'Deposited' order by d.block_number desc, d.log_index desc limit 1)`;

/**
 * Each account's deposit as of its latest Deposited event (wei), for the given accounts; accounts
 * without one are absent from the map.
 */
export async function latestTotalDeposits(db: Queryable, chainId: number, accounts: string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const { rows } = await db.query<{ account: string; total_deposit: string | null }>(
    `select a.account, ${latestTotalDepositSql('$1', 'a.account')} as total_deposit from unnest($2::bytea[]) a(account)`,
    [chainId, accounts.map((a) => bytea(a))],
  );
  return new Map(rows.flatMap((r) => (r.total_deposit === null ? [] : [[r.account, r.total_deposit] as const])));
}

// Writes (the indexer).

export type NewEntryPointDeposit = {
  blockNumber: number;
  logIndex: number;
  txHash: string;
  entryPoint: string;
  account: string;
  event: 'Deposited' | 'Withdrawn' | 'StakeLocked' | 'StakeUnlocked' | 'StakeWithdrawn';
  amount: bigint | null;
  totalDeposit: bigint | null;
};

const NEW_COLUMNS: ReadonlyArray<Column<NewEntryPointDeposit>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['block_number', 'bigint', (d) => d.blockNumber],
  ['log_index', 'integer', (d) => d.logIndex],
  ['tx_hash', 'bytea', (d) => d.txHash],
  ['entry_point', 'bytea', (d) => d.entryPoint],
  ['account', 'bytea', (d) => d.account],
  ['event', 'text', (d) => d.event],
  ['amount', 'numeric', (d) => numeric(d.amount)],
  ['total_deposit', 'numeric', (d) => numeric(d.totalDeposit)],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, deposits: NewEntryPointDeposit[]): Promise<void> {
  await copyRows(db, 'entry_point_deposits', NEW_COLUMNS, { rows: deposits, chainId: chainId });
}

/** Inserts the events not stored yet. */
export async function insertMany(db: Queryable, chainId: number, deposits: NewEntryPointDeposit[]): Promise<void> {
  if (deposits.length === 0) return;
  const { text, values } = unnestInsert(
    'entry_point_deposits',
    NEW_COLUMNS,
    { rows: deposits, chainId: chainId },
    'on conflict do nothing',
  );
  await db.query(text, values);
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from entry_point_deposits where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}

/** The subgraph's Deposit (server/graphql): Deposited events, id `<transactionHash>-<logIndex>`. */
export const depositView: EntityView = {
  from: 'entry_point_deposits t',
  block: 't.block_number',
  where: `t.event = 'Deposited'`,
  id: hashIndexId('t.tx_hash', 't.log_index', 'bytea'),
  fields: {
    account: column('t.account', 'Bytes', 'bytea'),
    totalDeposit: column('t.total_deposit', 'BigInt', 'numeric'),
    entryPoint: column('t.entry_point', 'Bytes', 'bytea'),
    transactionHash: column('t.tx_hash', 'Bytes', 'bytea'),
    blockNumber: column('t.block_number', 'BigInt', 'int8'),
    logIndex: column('t.log_index', 'Int', 'int4'),
  },
};
