import type { Queryable } from '../client.js';
import type { UserOp } from '../../models/userOp.js';
import { toUserOp, type StoredUserOp } from './userOps.js';

/**
 * Batch read of ops for webhook payloads: many hashes in one query, each op in the spec's UserOp
 * shape (through userOps.toUserOp, the API's own mapping) plus its block hash, by which the
 * dispatcher tells an op still on the canonical chain from one a reorg replaced.
 */
export type CanonicalOp = { userOp: UserOp; blockHash: string; blockTime: number };

export async function listByHashes(db: Queryable, chainId: number, hashes: string[]): Promise<Map<string, CanonicalOp>> {
  if (hashes.length === 0) return new Map();
  const { rows } = await db.query<StoredUserOp>(
    `select o.*, bt.input, coalesce(c.calls, '[]'::json) as calls,
            sa.factory as sender_factory, ta.factory as target_factory
       from user_ops o
       left join bundle_transactions bt on bt.chain_id = o.chain_id and bt.tx_hash = o.tx_hash
       left join lateral (
         select json_agg(json_build_object('target', uc.target, 'value', uc.value::text, 'data', uc.data)
                         order by uc.call_index) as calls
           from user_op_calls uc where uc.chain_id = o.chain_id and uc.user_op_hash = o.user_op_hash
       ) c on true
       left join accounts sa on sa.chain_id = o.chain_id and sa.address = o.sender
       left join accounts ta on ta.chain_id = o.chain_id and ta.address = c.calls->0->>'target'
      where o.chain_id = $1 and o.user_op_hash = any($2::text[])`,
    [chainId, hashes],
  );
  return new Map(
    rows.map((r) => [r.user_op_hash, { userOp: toUserOp(r), blockHash: r.block_hash, blockTime: Number(r.block_time) }]),
  );
}

/** accounts.factory of each address deployed through an indexed AccountDeployed. */
export async function listAccountFactories(db: Queryable, chainId: number, addresses: string[]): Promise<Map<string, string>> {
  if (addresses.length === 0) return new Map();
  const { rows } = await db.query<{ address: string; factory: string }>(
    `select address, factory from accounts where chain_id = $1 and address = any($2::text[]) and factory is not null`,
    [chainId, addresses],
  );
  return new Map(rows.map((r) => [r.address, r.factory]));
}
