import type { Queryable } from '../client.js';
import type { UserOp } from '../../models/userOp.js';
import { toUserOp } from '../../models/userOpOfStored.js';
import { listStoredByHashes } from './userOps.js';
import { listFactories } from './accounts.js';

/**
 * Batch read of ops for webhook payloads: many hashes in one query, each op in the spec's UserOp
 * shape (through toUserOp, the API's own mapping) plus its block hash, by which the
 * dispatcher tells an op still on the canonical chain from one a reorg replaced.
 */
export type CanonicalOp = { userOp: UserOp; blockHash: string; blockTime: number };

export async function listByHashes(db: Queryable, chainId: number, hashes: string[]): Promise<Map<string, CanonicalOp>> {
  const rows = await listStoredByHashes(db, chainId, hashes);
  return new Map(rows.map((r) => [r.user_op_hash, { userOp: toUserOp(r), blockHash: r.block_hash, blockTime: Number(r.block_time) }]));
}

/** accounts.factory of each address deployed through an indexed AccountDeployed. */
export const listAccountFactories = listFactories;
