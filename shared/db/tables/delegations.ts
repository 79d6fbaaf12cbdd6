import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';
import { column, hashIndexId, type EntityView } from '../entityView.js';

/**
 * `delegations`: every EIP-7702 authorization of the transactions the indexer reads
 * (INDEXER_DELEGATIONS), one row per tuple of a transaction's authorization list, kept whether it
 * took effect or not. An authority's delegate is the delegate of its latest effective row (none
 * when that row cleared it).
 */

/**
 * effective: the chain set (or cleared) the authority's delegation; otherwise why it did not:
 * wrong_chain_id (neither 0 nor the chain's), wrong_nonce (not the authority's nonce at that point
 * of the block), invalid_signature (no authority recovers, or s/yParity out of range); unverified:
 * the node did not answer the authority's nonce (state pruned), so whether it took effect is unknown.
 */
export const DELEGATION_STATUSES = ['effective', 'wrong_chain_id', 'wrong_nonce', 'invalid_signature', 'unverified'] as const;
export type DelegationStatus = (typeof DELEGATION_STATUSES)[number];

export type NewDelegation = {
  blockNumber: number;
  txIndex: number;
  /** The tuple's position in the transaction's authorization list. */
  authIndex: number;
  txHash: string;
  blockTime: number;
  /** null: no address recovers from the signature. */
  authority: string | null;
  /** null: the tuple clears the delegation (address zero). */
  delegate: string | null;
  authorizationChainId: bigint;
  authorizationNonce: bigint;
  /** The transaction is a bundle transaction: it calls an EntryPoint or carries its ops' events. */
  viaUserOp: boolean;
  status: DelegationStatus;
};

const NEW_COLUMNS: ReadonlyArray<Column<NewDelegation>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['block_number', 'bigint', (d) => d.blockNumber],
  ['tx_index', 'integer', (d) => d.txIndex],
  ['auth_index', 'integer', (d) => d.authIndex],
  ['tx_hash', 'bytea', (d) => d.txHash],
  ['block_time', 'bigint', (d) => d.blockTime],
  ['authority', 'bytea', (d) => d.authority],
  ['delegate', 'bytea', (d) => d.delegate],
  ['authorization_chain_id', 'numeric', (d) => numeric(d.authorizationChainId)],
  ['authorization_nonce', 'numeric', (d) => numeric(d.authorizationNonce)],
  ['via_user_op', 'boolean', (d) => d.viaUserOp],
  ['status', 'text', (d) => d.status],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, rows: NewDelegation[]): Promise<void> {
  await copyRows(db, 'delegations', NEW_COLUMNS, { rows, chainId });
}

/** Inserts the rows not stored yet. */
export async function insertMany(db: Queryable, chainId: number, rows: NewDelegation[]): Promise<void> {
  if (rows.length === 0) return;
  const { text, values } = unnestInsert('delegations', NEW_COLUMNS, { rows, chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from delegations where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}

// Reads (the API).

export type StoredDelegation = {
  delegate: string | null;
  blockNumber: number;
  blockTime: number;
  transactionHash: string;
  authorizationChainId: string;
  authorizationNonce: string;
  viaUserOp: boolean;
  status: DelegationStatus;
};

/** `authority`'s authorizations, newest first (the order the chain applied them, reversed). */
export async function listByAuthority(
  db: Queryable,
  chainId: number,
  authority: string,
  page: { first: number; skip: number },
): Promise<StoredDelegation[]> {
  const { rows } = await db.query<{
    delegate: string | null;
    block_number: string;
    block_time: string;
    tx_hash: string;
    authorization_chain_id: string;
    authorization_nonce: string;
    via_user_op: boolean;
    status: DelegationStatus;
  }>(
    `select delegate, block_number, block_time, tx_hash, authorization_chain_id::text, authorization_nonce::text, via_user_op, status
     from delegations where chain_id = $1 and authority = $2
     order by block_number desc, tx_index desc, auth_index desc
     limit $3 offset $4`,
    [chainId, bytea(authority), page.first, page.skip],
  );
  return rows.map((r) => ({
    delegate: r.delegate,
    blockNumber: Number(r.block_number),
    blockTime: Number(r.block_time),
    transactionHash: r.tx_hash,
    authorizationChainId: r.authorization_chain_id,
    authorizationNonce: r.authorization_nonce,
    viaUserOp: r.via_user_op,
    status: r.status,
  }));
}

/**
 * Each of `authorities`' current delegate as its latest effective authorization set it: the
 * delegate, or null when that authorization cleared it. Authorities without one are absent.
 */
export async function currentDelegates(db: Queryable, chainId: number, authorities: string[]): Promise<Map<string, string | null>> {
  if (authorities.length === 0) return new Map();
  const { rows } = await db.query<{ authority: string; delegate: string | null; effective: boolean }>(
    `select a.authority, ${currentDelegateSql('$1', 'a.authority')} as delegate,
            exists (select 1 from delegations d where d.chain_id = $1 and d.authority = a.authority and d.status = 'effective') as effective
     from unnest($2::bytea[]) a(authority)`,
    [chainId, authorities.map((a) => bytea(a))],
  );
  return new Map(rows.flatMap((r) => (r.effective ? [[r.authority, r.delegate] as const] : [])));
}

/**
 * The delegate `authority` (SQL of a bytea value, e.g. a column of the outer row) runs on chain
 * `chainId` (SQL) as its latest effective authorization set it: a correlated subquery, null when
 * none or when that one cleared it.
 */
export const currentDelegateSql = (chainId: string, authority: string) =>
  `(select d.delegate from delegations d where d.chain_id = ${chainId} and d.authority = ${authority} and d.status = 'effective'
      order by d.block_number desc, d.tx_index desc, d.auth_index desc limit 1)`;

/** The subgraph's Delegation (server/graphql): one authorization, id `<transactionHash>-<index in its list>`. */
export const delegationView: EntityView = {
  from: 'delegations t',
  block: 't.block_number',
  id: hashIndexId('t.tx_hash', 't.auth_index', 'bytea'),
  fields: {
    authority: column('t.authority', 'Bytes', 'bytea', true),
    delegate: column('t.delegate', 'Bytes', 'bytea', true),
    transactionHash: column('t.tx_hash', 'Bytes', 'bytea'),
    blockNumber: column('t.block_number', 'BigInt', 'int8'),
    blockTime: column('t.block_time', 'BigInt', 'int8'),
    authorizationNonce: column('t.authorization_nonce', 'BigInt', 'numeric'),
    authorizationChainId: column('t.authorization_chain_id', 'BigInt', 'numeric'),
    viaUserOp: column('t.via_user_op', 'Boolean', 'bool'),
    status: column('t.status', 'String', 'text'),
  },
};
