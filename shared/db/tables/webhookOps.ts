import type { Queryable } from '../client.js';
import type { UserOp } from '../../models/userOp.js';
import { listStoredByHashes, toUserOp } from './userOps.js';

/**
 * Batch read of ops for webhook payloads: many hashes in one query, each op in the spec's UserOp
 * shape (through userOps.toUserOp, the API's own mapping) plus its block hash, by which the
 * dispatcher tells an op still on the canonical chain from one a reorg replaced.
 */
export type CanonicalOp = { userOp: UserOp; blockHash: string; blockTime: number };

export async function listByHashes(db: Queryable, chainId: number, hashes: string[]): Promise<Map<string, CanonicalOp>> {
  const rows = await listStoredByHashes(db, chainId, hashes);
  return new Map(rows.map((r) => [r.user_op_hash, { userOp: toUserOp(r), blockHash: r.block_hash, blockTime: Number(r.block_time) }]));
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
