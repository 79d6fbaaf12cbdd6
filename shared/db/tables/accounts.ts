import type { Queryable } from '../client.js';
import type { Page } from '../page.js';

/** Reads of `accounts`: every sender seen, with its deployment when an AccountDeployed was indexed. */

export type Account = {
  address: string;
  factory: string | null;
  createdUserOpHash: string | null;
  createdTxHash: string | null;
  createdBlockNumber: string | null;
  createdBlockTime: string | null;
  userOpsCount: string;
};

type AccountRow = {
  address: string;
  factory: string | null;
  created_user_op_hash: string | null;
  created_tx_hash: string | null;
  created_block_number: string | null;
  created_block_time: string | null;
  user_ops_count: string;
};

const toAccount = (r: AccountRow): Account => ({
  address: r.address,
  factory: r.factory,
  createdUserOpHash: r.created_user_op_hash,
  createdTxHash: r.created_tx_hash,
  createdBlockNumber: r.created_block_number,
  createdBlockTime: r.created_block_time,
  userOpsCount: r.user_ops_count,
});

const COLUMNS = `address, factory, created_user_op_hash, created_tx_hash, created_block_number, created_block_time,
  user_ops_count`;

export async function find(db: Queryable, chainId: number, address: string): Promise<Account | null> {
  const { rows } = await db.query<AccountRow>(`select ${COLUMNS} from accounts where chain_id = $1 and address = $2`, [
    chainId,
    address,
  ]);
  return rows[0] ? toAccount(rows[0]) : null;
}

/** Accounts a factory deployed, newest first. */
export async function listByFactory(db: Queryable, chainId: number, factory: string, page: Page): Promise<Account[]> {
  const { rows } = await db.query<AccountRow>(
    `select ${COLUMNS} from accounts where chain_id = $1 and factory = $2
     order by created_block_number desc, address limit $3 offset $4`,
    [chainId, factory, page.first, page.skip],
  );
  return rows.map(toAccount);
}
