import type { Queryable } from '../client.js';
import type { Page } from '../page.js';
import type { Bundle } from '../../models/entities.js';
import { findNetworkByChainId } from '../../networks.js';

/** Reads of `bundles` (one row per bundle; a transaction may hold several), with their transaction. */

type BundleRow = {
  chain_id: string;
  tx_hash: string;
  bundle_index: number;
  block_number: string;
  block_time: string;
  entry_point: string;
  bundler: string;
  beneficiary: string | null;
  ops_count: number;
  tx_to: string | null;
  status: boolean | null;
  fee: string | null;
  /** `{id, userOpHash}` of its ops, in log order. */
  user_ops: Array<{ id: string; userOpHash: string }>;
};

function toBundle(r: BundleRow): Bundle {
  const chainId = Number(r.chain_id);
  return {
    userOpsLength: String(r.ops_count),
    transactionHash: r.tx_hash,
    network: findNetworkByChainId(chainId)?.name ?? String(chainId),
    blockNumber: r.block_number,
    blockTime: r.block_time,
    userOps: r.user_ops,
    from: r.bundler,
    to: r.tx_to,
    status: r.status === false ? '0' : '1',
    transactionFee: r.fee ?? '0',
    bundleIndex: r.bundle_index,
    beneficiary: r.beneficiary,
    entryPoint: r.entry_point,
  };
}

/** The latest bundles of a network, newest first (by block, then position in the block). */
export async function listLatest(db: Queryable, chainId: number, page: Page): Promise<Bundle[]> {
  const { rows } = await db.query<BundleRow>(
    `select b.chain_id, b.tx_hash, b.bundle_index, b.block_number, b.block_time, b.entry_point, b.bundler,
            b.beneficiary, b.ops_count, bt.tx_to, bt.status, bt.fee,
            coalesce((select json_agg(json_build_object('id', o.user_op_hash || '-' || o.log_index, 'userOpHash', o.user_op_hash)
                                      order by o.log_index)
                      from user_ops o
                      where o.chain_id = b.chain_id and o.tx_hash = b.tx_hash and o.bundle_index = b.bundle_index),
                     '[]'::json) as user_ops
     from bundles b
     left join bundle_transactions bt on bt.chain_id = b.chain_id and bt.tx_hash = b.tx_hash
     where b.chain_id = $1
     order by b.block_number desc, bt.tx_index desc, b.bundle_index desc
     limit $2 offset $3`,
    [chainId, page.first, page.skip],
  );
  return rows.map(toBundle);
}
