import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { unnestInsert, type Column } from '../unnest.js';
import type { Page } from '../page.js';
import type { Transaction } from '../../models/address.js';
import { ZERO_ADDRESS } from '../../chain/constants.js';
import { byteaLiteral } from '../entityView.js';
import { transactionsOfParty } from './tokenTransfers.js';

/**
 * Reads of `address_transactions`: the bundle transactions an address took part in other than as
 * an op's sender, bundler or first call target (which user_ops answers) or as a token transfer's
 * party (which token_transfers answers), each by its block number and
 * index, where bundle_transactions_position finds it. listByAddress answers all of them in the
 * spec's (Covalent-style) Transaction shape. Labels and price quotes are left null here; the API
 * fills them from its label list and price source.
 */

type AddressTransactionRow = {
  tx_hash: string;
  block_number: string;
  block_time: string;
  tx_index: number;
  tx_from: string;
  tx_to: string | null;
  status: boolean;
  gas_used: string;
  effective_gas_price: string;
  fee: string;
};

export function toTransaction(r: AddressTransactionRow): Transaction {
  return {
    block_signed_at: new Date(Number(r.block_time) * 1000).toISOString(),
    block_height: Number(r.block_number),
    tx_hash: r.tx_hash,
    tx_offset: r.tx_index,
    successful: r.status,
    from_address: r.tx_from,
    from_address_label: null,
    to_address: r.tx_to,
    to_address_label: null,
    // handleOps / handleAggregatedOps are not payable: a bundle transaction carries no value.
    value: '0',
    value_quote: null,
    pretty_value_quote: null,
    // The transaction's gas limit is not indexed; what it used is the lower bound.
    gas_offered: Number(r.gas_used),
    gas_spent: Number(r.gas_used),
    gas_price: Number(r.effective_gas_price),
    fees_paid: r.fee,
    gas_quote: null,
    pretty_gas_quote: null,
    gas_quote_rate: null,
  };
}

/**
 * The distinct positions of an address's ops as their `role` (sender, bundler, or target: the first
 * call's), newest first: its user_ops index read backward (block_number, log_index), keeping each
 * transaction's first row. A transaction's ops are contiguous in that order (its logs are, in its
 * block), so the first `$3` positions are read without a sort, however many ops each holds. The
 * zero address is no op's target here: it takes part in no transaction (the indexer's rule).
 */
const opPositions = (role: 'sender' | 'bundler' | 'target') => `(select block_number, tx_index
   from (select block_number, tx_index, lag(block_number) over w as prev_block, lag(tx_index) over w as prev_tx
         from user_ops where chain_id = $1 and ${role} = $2${role === 'target' ? ` and $2 <> ${byteaLiteral(ZERO_ADDRESS)}` : ''}
         window w as (order by block_number desc, log_index desc)) o
   where (block_number, tx_index) is distinct from (prev_block, prev_tx)
   limit $3)`;

/**
 * The address's bundle transactions, newest first: the union of its own rows here (a call target
 * other than an op's first) and the transactions where it is an op's sender, bundler or first call
 * target, or a token transfer's party, which the indexer does not repeat here (user_ops' indexes by
 * sender, bundler and target and token_transfers' by sender and receiver find them). Each branch reads
 * its own index, newest first, for its distinct positions up to the page's end; a position found
 * by several is answered once.
 */
export async function listByAddress(db: Queryable, chainId: number, address: string, page: Page): Promise<Transaction[]> {
  const { rows } = await db.query<AddressTransactionRow>(
    `select bt.tx_hash, bt.block_number, bt.block_time, bt.tx_index, bt.tx_from, bt.tx_to, bt.status,
            bt.gas_used, bt.effective_gas_price, bt.fee
     from (select block_number, tx_index
           from ((select block_number, tx_index from address_transactions
                  where chain_id = $1 and address = $2
                  order by block_number desc, tx_index desc limit $3)
                 union ${opPositions('sender')}
                 union ${opPositions('bundler')}
                 union ${opPositions('target')}
                 union ${transactionsOfParty('from_address')}
                 union ${transactionsOfParty('to_address')}) p
           order by block_number desc, tx_index desc limit $4 offset $5) a
     join bundle_transactions bt on bt.chain_id = $1 and bt.block_number = a.block_number and bt.tx_index = a.tx_index
     order by a.block_number desc, a.tx_index desc`,
    [chainId, bytea(address), page.first + page.skip, page.first, page.skip],
  );
  return rows.map(toTransaction);
}

// Writes (the indexer).

export type NewAddressTransaction = { address: string; blockNumber: number; txIndex: number };

const NEW_COLUMNS: ReadonlyArray<Column<NewAddressTransaction>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['address', 'bytea', (r) => r.address],
  ['block_number', 'bigint', (r) => r.blockNumber],
  ['tx_index', 'integer', (r) => r.txIndex],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, rows: NewAddressTransaction[]): Promise<void> {
  await copyRows(db, 'address_transactions', NEW_COLUMNS, { rows: rows, chainId: chainId });
}

/** Inserts the rows not stored yet. */
export async function insertMany(db: Queryable, chainId: number, rows: NewAddressTransaction[]): Promise<void> {
  if (rows.length === 0) return;
  const { text, values } = unnestInsert('address_transactions', NEW_COLUMNS, { rows: rows, chainId: chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from address_transactions where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}
