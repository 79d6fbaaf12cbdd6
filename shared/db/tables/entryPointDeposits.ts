import type { Queryable } from '../client.js';

/** Reads of `entry_point_deposits`: EntryPoint stake-manager events. */

/**
 * Each account's deposit as of its latest Deposited event (wei), for the given accounts; accounts
 * without one are absent from the map.
 */
export async function latestTotalDeposits(db: Queryable, chainId: number, accounts: string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const { rows } = await db.query<{ account: string; total_deposit: string }>(
    `select distinct on (account) account, total_deposit from entry_point_deposits
     where chain_id = $1 and account = any($2::text[]) and event = 'Deposited'
     order by account, block_number desc, log_index desc`,
    [chainId, accounts],
  );
  return new Map(rows.map((r) => [r.account, r.total_deposit]));
}
