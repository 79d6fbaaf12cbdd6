import { bytea, type Queryable } from '../client.js';
import type { Page } from '../page.js';
import { byteaLiteral, bytesId, column, type EntityView } from '../entityView.js';
import { latestTotalDepositSql } from './entryPointDeposits.js';
import { ZERO_ADDRESS } from '../../chain/constants.js';
import { currentDelegateSql } from './delegations.js';

/** Reads of `accounts`: every sender seen, with its deployment when an AccountDeployed was indexed. */

export type Account = {
  address: string;
  factory: string | null;
  createdUserOpHash: string | null;
  createdTxHash: string | null;
  createdBlockNumber: string | null;
  createdBlockTime: string | null;
  userOpsCount: string;
  /** The implementation it runs (shared/accountImplementations.ts), 'unknown', or null: not looked at yet. */
  implementation: string | null;
};

type AccountRow = {
  address: string;
  factory: string | null;
  created_user_op_hash: string | null;
  created_tx_hash: string | null;
  created_block_number: string | null;
  created_block_time: string | null;
  user_ops_count: string;
  implementation: string | null;
};

const toAccount = (r: AccountRow): Account => ({
  address: r.address,
  factory: r.factory,
  createdUserOpHash: r.created_user_op_hash,
  createdTxHash: r.created_tx_hash,
  createdBlockNumber: r.created_block_number,
  createdBlockTime: r.created_block_time,
  userOpsCount: r.user_ops_count,
  implementation: r.implementation,
});

const COLUMNS = `address, factory, created_user_op_hash, created_tx_hash, created_block_number, created_block_time,
  user_ops_count, implementation`;

export async function find(db: Queryable, chainId: number, address: string): Promise<Account | null> {
  const { rows } = await db.query<AccountRow>(`select ${COLUMNS} from accounts where chain_id = $1 and address = $2`, [
    chainId,
    bytea(address),
  ]);
  return rows[0] ? toAccount(rows[0]) : null;
}

/**
 * find, with the address's EntryPoint deposit (wei, null when none) from the same statement: an
 * address may have either without the other, so the account row is joined to the address.
 */
export async function findWithDeposit(
  db: Queryable,
  chainId: number,
  address: string,
): Promise<{ account: Account | null; totalDeposit: string | null }> {
  const { rows } = await db.query<{ [K in keyof AccountRow]: AccountRow[K] | null } & { total_deposit: string | null }>(
    `select ${COLUMNS}, ${latestTotalDepositSql('$1', '$2::bytea')} as total_deposit
     from (select) given left join accounts on chain_id = $1 and address = $2`,
    [chainId, bytea(address)],
  );
  const row = rows[0]!;
  return { account: row.address === null ? null : toAccount(row as AccountRow), totalDeposit: row.total_deposit };
}

/** Accounts a factory deployed, newest first. */
export async function listByFactory(db: Queryable, chainId: number, factory: string, page: Page): Promise<Account[]> {
  const { rows } = await db.query<AccountRow>(
    `select ${COLUMNS} from accounts where chain_id = $1 and factory = $2
     order by created_block_number desc, address limit $3 offset $4`,
    [chainId, bytea(factory), page.first, page.skip],
  );
  return rows.map(toAccount);
}

// Writes (the indexer). An account row is every sender seen: user_ops_count and first/last op
// block from its ops; factory and created_* from the op whose AccountDeployed deployed it.

export type AccountActivity = {
  address: string;
  userOps: number;
  firstOpBlock: number;
  lastOpBlock: number;
  /** An op of this batch showed the account to be an EIP-7702 delegated EOA. */
  eip7702: boolean;
  /** Set when this batch holds the op that deployed the account. */
  deployment: { factory: string; userOpHash: string; txHash: string; blockNumber: number; blockTime: number } | null;
};

export async function upsertActivity(db: Queryable, chainId: number, rows: AccountActivity[]): Promise<void> {
  if (rows.length === 0) return;
  const d = (r: AccountActivity) => r.deployment;
  await db.query(
    `insert into accounts (chain_id, address, user_ops_count, first_op_block, last_op_block, factory, created_user_op_hash,
       created_tx_hash, created_block_number, created_block_time, eip7702)
     select $1, * from unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[], $7::bytea[], $8::bytea[],
       $9::bigint[], $10::bigint[], $11::boolean[])
     on conflict (chain_id, address) do update set
       user_ops_count = accounts.user_ops_count + excluded.user_ops_count,
       eip7702 = accounts.eip7702 or excluded.eip7702,
       first_op_block = least(accounts.first_op_block, excluded.first_op_block),
       last_op_block = greatest(accounts.last_op_block, excluded.last_op_block),
       factory = coalesce(accounts.factory, excluded.factory),
       created_user_op_hash = coalesce(accounts.created_user_op_hash, excluded.created_user_op_hash),
       created_tx_hash = coalesce(accounts.created_tx_hash, excluded.created_tx_hash),
       created_block_number = coalesce(accounts.created_block_number, excluded.created_block_number),
       created_block_time = coalesce(accounts.created_block_time, excluded.created_block_time)`,
    [
      chainId,
      rows.map((r) => bytea(r.address)),
      rows.map((r) => r.userOps),
      rows.map((r) => r.firstOpBlock),
      rows.map((r) => r.lastOpBlock),
      rows.map((r) => bytea(d(r)?.factory)),
      rows.map((r) => bytea(d(r)?.userOpHash)),
      rows.map((r) => bytea(d(r)?.txHash)),
      rows.map((r) => d(r)?.blockNumber ?? null),
      rows.map((r) => d(r)?.blockTime ?? null),
      rows.map((r) => r.eip7702),
    ],
  );
}

/** Marks accounts shown to be EIP-7702 delegated EOAs by calldata decoded later (the repair pass). */
export async function markEip7702(db: Queryable, chainId: number, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return;
  await db.query(`update accounts set eip7702 = true where chain_id = $1 and address = any($2::bytea[]) and not eip7702`, [
    chainId,
    addresses.map((a) => bytea(a)),
  ]);
}

/** The factory of each of `addresses` that an indexed AccountDeployed names. */
export async function listFactories(db: Queryable, chainId: number, addresses: string[]): Promise<Map<string, string>> {
  if (addresses.length === 0) return new Map();
  const { rows } = await db.query<{ address: string; factory: string }>(
    `select address, factory from accounts where chain_id = $1 and address = any($2::bytea[]) and factory is not null`,
    [chainId, addresses.map((a) => bytea(a))],
  );
  return new Map(rows.map((r) => [r.address, r.factory]));
}

/** An account the indexer has not named yet, with the block whose state it is read at. */
export type UnnamedAccount = { address: string; factory: string | null; block: number };

/**
 * Up to `limit` accounts not named yet (implementation null), oldest first, each with the block it
 * was first seen at: its deployment's if indexed, else its first op's.
 */
export async function listUnnamed(db: Queryable, chainId: number, limit: number): Promise<UnnamedAccount[]> {
  const { rows } = await db.query<{ address: string; factory: string | null; block: string }>(
    `select address, factory, coalesce(created_block_number, first_op_block)::text as block from accounts
     where chain_id = $1 and implementation is null order by first_op_block, address limit $2`,
    [chainId, limit],
  );
  return rows.map((r) => ({ address: r.address, factory: r.factory, block: Number(r.block) }));
}

/** Stores the names found for accounts still unnamed (a reorg may have rebuilt one since it was read). */
export async function setImplementations(
  db: Queryable,
  chainId: number,
  named: Array<{ address: string; implementation: string }>,
): Promise<void> {
  if (named.length === 0) return;
  await db.query(
    `update accounts a set implementation = n.implementation
     from unnest($2::bytea[], $3::text[]) as n(address, implementation)
     where a.chain_id = $1 and a.address = n.address and a.implementation is null`,
    [chainId, named.map((n) => bytea(n.address)), named.map((n) => n.implementation)],
  );
}

/** Rebuilds `addresses` from user_ops (after a reorg removed rows); an account left without ops disappears. */
export async function recompute(db: Queryable, chainId: number, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return;
  const addressParam = addresses.map((a) => bytea(a));
  await db.query(`delete from accounts where chain_id = $1 and address = any($2::bytea[])`, [chainId, addressParam]);
  await db.query(
    `insert into accounts (chain_id, address, user_ops_count, first_op_block, last_op_block, factory, created_user_op_hash,
       created_tx_hash, created_block_number, created_block_time, eip7702)
     select o.chain_id, o.sender, count(*), min(o.block_number), max(o.block_number), d.factory, d.user_op_hash, d.tx_hash,
            d.block_number, d.block_time, bool_or(o.eip7702)
     from user_ops o
     left join lateral (
       select x.factory, x.user_op_hash, x.tx_hash, x.block_number, x.block_time from user_ops x
       where x.chain_id = o.chain_id and x.sender = o.sender and x.factory is not null
       order by x.block_number, x.log_index limit 1
     ) d on true
     where o.chain_id = $1 and o.sender = any($2::bytea[])
     group by o.chain_id, o.sender, d.factory, d.user_op_hash, d.tx_hash, d.block_number, d.block_time`,
    [chainId, addressParam],
  );
}

/** The subgraph's Account (server/graphql): id = address; deployment fields null when none was indexed. */
export const accountView: EntityView = {
  from: 'accounts t',
  id: bytesId('t.address'),
  fields: {
    address: column('t.address', 'Bytes', 'bytea'),
    factory: column('t.factory', 'Bytes', 'bytea', true),
    paymaster: column(
      `(select coalesce(u.paymaster, ${byteaLiteral(ZERO_ADDRESS)}) from user_ops u where u.chain_id = t.chain_id and u.user_op_hash = t.created_user_op_hash)`,
      'Bytes',
      'bytea',
      true,
    ),
    userOpHash: column('t.created_user_op_hash', 'Bytes', 'bytea', true),
    transactionHash: column('t.created_tx_hash', 'Bytes', 'bytea', true),
    blockNumber: column('t.created_block_number', 'BigInt', 'int8', true),
    blockTime: column('t.created_block_time', 'BigInt', 'int8', true),
    userOpsCount: column('t.user_ops_count', 'BigInt', 'int8'),
    implementation: column('t.implementation', 'String', 'text', true),
    delegation: column(currentDelegateSql('t.chain_id', 't.address'), 'Bytes', 'bytea', true),
  },
};
