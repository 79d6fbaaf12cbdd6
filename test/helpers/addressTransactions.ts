/**
 * What the migration tests of address_transactions share: made-up addresses and words, a bundle
 * transaction row, the read of a set of transaction positions as the API answers them, the table's
 * rows, and every page of every address's transactions as a read gives them.
 */
import { bytea, type Queryable } from '../../shared/db/client.js';
import type { Page } from '../../shared/db/page.js';
import * as addressTransactions from '../../shared/db/tables/addressTransactions.js';

export const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
export const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** A successful bundle transaction at (block, index) sent by `from`; its hash is `txHash`. */
export async function insertBundleTransaction(
  db: Queryable,
  chainId: number,
  tx: { txHash: string; block: number; index: number; from: string },
): Promise<void> {
  await db.query(
    `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input, status,
                                      gas_used, effective_gas_price, fee)
     values ($1, $2, $3, $4, $5, $6, $7, $8, '\\x', true, $9, 1, $9)`,
    [
      chainId,
      bytea(tx.txHash),
      tx.block,
      bytea(word(tx.block)),
      1_700_000_000 + tx.block * 12,
      tx.index,
      bytea(tx.from),
      bytea(address(0xe9)),
      21_000 + tx.index,
    ],
  );
}

/**
 * A read of an address's page of the transactions at the positions `positions` selects (SQL giving
 * block_number and tx_index, over $1 the chain and $2 the address), newest first, as listByAddress
 * answers them: what a read before a migration gave.
 */
export const positionsReader =
  (db: Queryable, chainId: number, positions: string) =>
  async (a: string, page: Page): Promise<unknown[]> => {
    const { rows } = await db.query<Parameters<typeof addressTransactions.toTransaction>[0]>(
      `select bt.tx_hash, bt.block_number, bt.block_time, bt.tx_index, bt.tx_from, bt.tx_to, bt.status,
            bt.gas_used, bt.effective_gas_price, bt.fee
     from (select block_number, tx_index from (${positions}) p
           order by block_number desc, tx_index desc limit $3 offset $4) a
     join bundle_transactions bt on bt.chain_id = $1 and bt.block_number = a.block_number and bt.tx_index = a.tx_index
     order by a.block_number desc, a.tx_index desc`,
      [chainId, bytea(a), page.first, page.skip],
    );
    return rows.map(addressTransactions.toTransaction);
  };

/** The table's rows as [address, block number, tx index], in key order. */
export async function addressRows(db: Queryable): Promise<Array<[string, number, number]>> {
  const { rows } = await db.query<{ address: string; block_number: string; tx_index: number }>(
    `select address, block_number, tx_index from address_transactions order by address, block_number, tx_index`,
  );
  return rows.map((r) => [r.address, Number(r.block_number), r.tx_index]);
}

/** Each address's page as `list` answers it, keyed `address:first:skip`. */
export async function addressPages(
  addresses: string[],
  pages: Page[],
  list: (address: string, page: Page) => Promise<unknown[]>,
): Promise<Map<string, unknown[]>> {
  const answers = new Map<string, unknown[]>();
  for (const a of addresses) for (const p of pages) answers.set(`${a}:${p.first}:${p.skip}`, await list(a, p));
  return answers;
}
