import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';
import { byteaLiteral, column, hexOf, type EntityView } from '../entityView.js';
import { ZERO_ADDRESS } from '../../chain/constants.js';
import type { Page } from '../page.js';
import type { Erc20Transfer, NftTransfer } from '../../models/address.js';

/**
 * Reads of `token_transfers` in the spec's (Alchemy-style) transfer shapes, with token metadata
 * from `tokens`.
 */

type TransferRow = {
  tx_hash: string;
  log_index: number;
  block_number: string;
  block_time: string;
  user_op_hash: string | null;
  standard: 'ERC20' | 'ERC721' | 'ERC1155' | 'NATIVE';
  token: string;
  from_address: string;
  to_address: string;
  value: string;
  token_id: string | null;
  symbol: string | null;
  name: string | null;
  decimals: number | null;
};

/**
 * A transfer's transaction hash as SQL over the row alias `t`: a plain transaction's transfer keeps
 * its own; an op's transfer has none stored (the op's row holds it) and takes its op's, by user_ops' key.
 */
export const txHashOf = (t: string): string =>
  `coalesce(${t}.tx_hash, (select o.tx_hash from user_ops o where o.chain_id = ${t}.chain_id and o.user_op_hash = ${t}.user_op_hash))`;

/**
 * SQL: the distinct bundle transactions (block_number, tx_index) where the address `$2` on chain `$1`
 * is a transfer's `side` (from_address or to_address), newest first, the first `$3` of them: its
 * index read backward, each transfer's transaction found by its op (user_ops' key) or its own hash
 * (bundle_transactions' key); a plain transaction's transfer has no bundle transaction and is left
 * out. A transaction's transfers are contiguous in (block_number, log_index) order (its logs are, in
 * its block), so keeping each transaction's first row needs no sort beyond that order. The zero
 * address (mints, burns) has none: it takes part in no transaction (addressTransactions).
 */
export const transactionsOfParty = (side: 'from_address' | 'to_address'): string => `(select block_number, tx_index
   from (select block_number, tx_index, lag(block_number) over w as prev_block, lag(tx_index) over w as prev_tx
         from (select t.block_number, t.log_index,
                      coalesce((select o.tx_index from user_ops o where o.chain_id = t.chain_id and o.user_op_hash = t.user_op_hash),
                               (select bt.tx_index from bundle_transactions bt where bt.chain_id = t.chain_id and bt.tx_hash = t.tx_hash)) as tx_index
               from token_transfers t
               where t.chain_id = $1 and t.${side} = $2 and $2 <> ${byteaLiteral(ZERO_ADDRESS)}) p
         where tx_index is not null
         window w as (order by block_number desc, log_index desc)) o
   where (block_number, tx_index) is distinct from (prev_block, prev_tx)
   limit $3)`;

const hex = (value: string | number): string => `0x${BigInt(value).toString(16)}`;
const isoTime = (blockTime: string): string => new Date(Number(blockTime) * 1000).toISOString();

/** Whole tokens as a float (Alchemy's `value`); the exact amount is in rawContract.value. */
function wholeTokens(raw: string, decimals: number | null): number {
  if (!decimals) return Number(raw);
  const scale = 10n ** BigInt(decimals);
  const amount = BigInt(raw);
  return Number(amount / scale) + Number(amount % scale) / Number(scale);
}

export const toErc20Transfer = (r: TransferRow): Erc20Transfer => ({
  from: r.from_address,
  to: r.to_address,
  value: wholeTokens(r.value, r.decimals),
  hash: r.tx_hash,
  blockNum: Number(r.block_number),
  asset: r.symbol,
  catergory: 'erc20',
  category: 'erc20',
  rawContract: { address: r.token, value: hex(r.value), decimal: r.decimals === null ? null : hex(r.decimals) },
  userOpHash: r.user_op_hash,
  logIndex: r.log_index,
  metadata: { blockTimestamp: isoTime(r.block_time) },
});

export const toNftTransfer = (r: TransferRow): NftTransfer => {
  const category = r.standard === 'ERC1155' ? 'erc1155' : 'erc721';
  const tokenId = r.token_id ?? '0';
  return {
    from: r.from_address,
    to: r.to_address,
    tokenId,
    hash: r.tx_hash,
    value: Number(r.value),
    blockNum: Number(r.block_number),
    asset: r.symbol,
    catergory: category,
    erc721TokenId: `0x${BigInt(tokenId).toString(16).padStart(64, '0')}`,
    erc721Metadata: '',
    rawContract: { address: r.token },
    category,
    userOpHash: r.user_op_hash,
    logIndex: r.log_index,
    metadata: { blockTimestamp: isoTime(r.block_time) },
  };
};

/**
 * Transfers of the given standards where the address is sender or receiver, newest first. Each
 * side is read through its own index, limited to the rows the page can need.
 */
async function listByParty(
  db: Queryable,
  where: { chainId: number; address: string; standards: string[] },
  page: Page,
): Promise<TransferRow[]> {
  const side = (column: string) => `(select * from token_transfers
     where chain_id = $1 and ${column} = $2 and standard = any($3::text[])
     order by block_number desc, log_index desc, batch_index desc limit $4)`;
  const { rows } = await db.query<TransferRow>(
    `select ${txHashOf('x')} as tx_hash, x.log_index, x.block_number, x.block_time, x.user_op_hash, x.standard, x.token,
            x.from_address, x.to_address, x.value::text as value, x.token_id::text as token_id,
            t.symbol, t.name, t.decimals
     from (${side('from_address')} union ${side('to_address')}) x
     left join tokens t on t.chain_id = x.chain_id and t.address = x.token
     order by x.block_number desc, x.log_index desc, x.batch_index desc
     limit $5 offset $6`,
    [where.chainId, bytea(where.address), where.standards, page.first + page.skip, page.first, page.skip],
  );
  return rows;
}

export async function listErc20ByAddress(db: Queryable, chainId: number, address: string, page: Page): Promise<Erc20Transfer[]> {
  return (await listByParty(db, { chainId, address, standards: ['ERC20'] }, page)).map(toErc20Transfer);
}

export async function listNftByAddress(db: Queryable, chainId: number, address: string, page: Page): Promise<NftTransfer[]> {
  return (await listByParty(db, { chainId, address, standards: ['ERC721', 'ERC1155'] }, page)).map(toNftTransfer);
}

/** A token transfer made during an op, with its token's metadata (getUserOpMetadata, the explorer dialect's getUserOp). */
export type UserOpTokenTransfer = {
  standard: 'ERC20' | 'ERC721' | 'ERC1155';
  token: string;
  from: string;
  to: string;
  /** Raw amount (ERC-721: 1). */
  value: string;
  tokenId: string | null;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
};

/**
 * The token transfers made during an op, in log order (native transfers are not token transfers): the
 * rows of the op's block, read through the key (chain_id, block_number, log_index, batch_index), that
 * are the op's. There is no index on the op's hash: the key by position serves this read too.
 */
export async function listByUserOp(
  db: Queryable,
  chainId: number,
  op: { userOpHash: string; blockNumber: string | number },
): Promise<UserOpTokenTransfer[]> {
  const { rows } = await db.query<TransferRow>(
    `select x.standard, x.token, x.from_address, x.to_address, x.value::text as value, x.token_id::text as token_id,
            t.name, t.symbol, t.decimals
     from token_transfers x left join tokens t on t.chain_id = x.chain_id and t.address = x.token
     where x.chain_id = $1 and x.block_number = $2 and x.user_op_hash = $3 and x.standard <> 'NATIVE'
     order by x.log_index, x.batch_index`,
    [chainId, op.blockNumber, bytea(op.userOpHash)],
  );
  return rows.map((r) => ({
    standard: r.standard as UserOpTokenTransfer['standard'],
    token: r.token,
    from: r.from_address,
    to: r.to_address,
    value: r.value,
    tokenId: r.token_id,
    name: r.name,
    symbol: r.symbol,
    decimals: r.decimals,
  }));
}

// Writes (the indexer).

export type NewTokenTransfer = {
  txHash: string;
  /** Block-level log index; NATIVE: -1 - the op's UserOperationEvent log index. */
  logIndex: number;
  /** ERC-1155 TransferBatch position; NATIVE: the call's index in the op. */
  batchIndex: number;
  blockNumber: number;
  blockTime: number;
  userOpHash: string | null;
  standard: 'ERC20' | 'ERC721' | 'ERC1155' | 'NATIVE';
  token: string | null;
  from: string;
  to: string;
  value: bigint;
  tokenId: bigint | null;
};

const NEW_COLUMNS: ReadonlyArray<Column<NewTokenTransfer>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  // An op's transfer is in its op's transaction (user_ops.tx_hash): not stored twice.
  ['tx_hash', 'bytea', (t) => (t.userOpHash === null ? t.txHash : null)],
  ['log_index', 'integer', (t) => t.logIndex],
  ['batch_index', 'integer', (t) => t.batchIndex],
  ['block_number', 'bigint', (t) => t.blockNumber],
  ['block_time', 'bigint', (t) => t.blockTime],
  ['user_op_hash', 'bytea', (t) => t.userOpHash],
  ['standard', 'text', (t) => t.standard],
  ['token', 'bytea', (t) => t.token],
  ['from_address', 'bytea', (t) => t.from],
  ['to_address', 'bytea', (t) => t.to],
  ['value', 'numeric', (t) => numeric(t.value)],
  ['token_id', 'numeric', (t) => numeric(t.tokenId)],
];

/**
 * The transfers this table keeps: token transfers. An op's native value transfers (NATIVE, which the
 * indexer decodes for webhook matching) are its calls' values, kept with the op (user_ops.calls_*),
 * and no answer reads them from here: they are not stored.
 */
const tokenOnly = (transfers: NewTokenTransfer[]) => transfers.filter((t) => t.standard !== 'NATIVE');

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, transfers: NewTokenTransfer[]): Promise<void> {
  await copyRows(db, 'token_transfers', NEW_COLUMNS, { rows: tokenOnly(transfers), chainId: chainId });
}

/** Inserts the transfers not stored yet. */
export async function insertMany(db: Queryable, chainId: number, transfers: NewTokenTransfer[]): Promise<void> {
  const rows = tokenOnly(transfers);
  if (rows.length === 0) return;
  const { text, values } = unnestInsert('token_transfers', NEW_COLUMNS, { rows, chainId: chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from token_transfers where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}

/** Token transfers as the subgraph's erc20Transfers / erc721Transfers of an op (server/graphql). */
export const tokenTransferView: EntityView = {
  from: 'token_transfers t left join tokens tk on tk.chain_id = t.chain_id and tk.address = t.token',
  block: 't.block_number',
  id: {
    sql: `${hexOf(txHashOf('t'))} || '-' || t.log_index || '-' || t.batch_index`,
    order: [txHashOf('t'), 't.log_index', 't.batch_index'],
  },
  fields: {
    userOpHash: column('t.user_op_hash', 'Bytes', 'bytea', true),
    standard: column('t.standard', 'String', 'text'),
    contractAddress: column('t.token', 'Bytes', 'bytea', true),
    from: column('t.from_address', 'Bytes', 'bytea'),
    to: column('t.to_address', 'Bytes', 'bytea'),
    value: column('t.value', 'BigInt', 'numeric'),
    tokenId: column('t.token_id', 'BigInt', 'numeric', true),
    name: column('tk.name', 'String', 'text', true),
    symbol: column('tk.symbol', 'String', 'text', true),
    decimals: column('tk.decimals', 'Int', 'int4', true),
    transactionHash: column(txHashOf('t'), 'Bytes', 'bytea'),
    blockNumber: column('t.block_number', 'BigInt', 'int8'),
    logIndex: column('t.log_index', 'Int', 'int4'),
  },
};
