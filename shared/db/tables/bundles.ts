import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';
import type { Page } from '../page.js';
import type { BundlerDay } from './bundlerDays.js';
import type { Bundle } from '../../models/entities.js';
import { findNetworkByChainId } from '../../networks.js';
import { column, hashIndexId, hexOf, type EntityView } from '../entityView.js';

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
  revenue: string;
  profit: string;
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
    revenue: r.revenue,
    profit: r.profit,
    bundleIndex: r.bundle_index,
    beneficiary: r.beneficiary,
    entryPoint: r.entry_point,
  };
}

/** A bundle's share of its transaction's fee (`b`: bundles, `bt`: its bundle_transactions row). */
const FEE_SHARE = 'coalesce(b.fee_share, bt.fee, 0)';

/** The latest bundles of a network, newest first (by block, then position in the block). */
export async function listLatest(db: Queryable, chainId: number, page: Page): Promise<Bundle[]> {
  const { rows } = await db.query<BundleRow>(
    `select b.chain_id, b.tx_hash, b.bundle_index, b.block_number, b.block_time, b.entry_point, b.bundler,
            b.beneficiary, b.ops_count, bt.tx_to, bt.status, bt.fee, b.actual_gas_cost_sum::text as revenue,
            (b.actual_gas_cost_sum - ${FEE_SHARE})::text as profit,
            coalesce((select json_agg(json_build_object('id', ${hexOf('o.user_op_hash')} || '-' || o.log_index, 'userOpHash', ${hexOf('o.user_op_hash')})
                                      order by o.log_index)
                      from user_ops o
                      -- In the bundle's block: a range of user_ops_latest (no index by transaction).
                      where o.chain_id = b.chain_id and o.block_number = b.block_number and o.tx_hash = b.tx_hash
                        and o.bundle_index = b.bundle_index),
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

// Writes (the indexer).

export type NewBundle = {
  txHash: string;
  bundleIndex: number;
  blockNumber: number;
  blockTime: number;
  entryPoint: string;
  entryPointVersion: string;
  bundler: string;
  beneficiary: string | null;
  aggregated: boolean;
  opsCount: number;
  opsFailed: number;
  actualGasCostSum: bigint;
  feeShare: bigint;
};

const NEW_COLUMNS: ReadonlyArray<Column<NewBundle>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['tx_hash', 'bytea', (b) => b.txHash],
  ['bundle_index', 'integer', (b) => b.bundleIndex],
  ['block_number', 'bigint', (b) => b.blockNumber],
  ['block_time', 'bigint', (b) => b.blockTime],
  ['entry_point', 'bytea', (b) => b.entryPoint],
  ['entry_point_version', 'text', (b) => b.entryPointVersion],
  ['bundler', 'bytea', (b) => b.bundler],
  ['beneficiary', 'bytea', (b) => b.beneficiary],
  ['aggregated', 'boolean', (b) => b.aggregated],
  ['ops_count', 'integer', (b) => b.opsCount],
  ['ops_failed', 'integer', (b) => b.opsFailed],
  ['actual_gas_cost_sum', 'numeric', (b) => numeric(b.actualGasCostSum)],
  ['fee_share', 'numeric', (b) => numeric(b.feeShare)],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, bundles: NewBundle[]): Promise<void> {
  await copyRows(db, 'bundles', NEW_COLUMNS, { rows: bundles, chainId: chainId });
}

/** Inserts the bundles not yet stored; returns `txHash:bundleIndex` of those that were new. */
export async function insertMany(db: Queryable, chainId: number, bundles: NewBundle[]): Promise<Set<string>> {
  if (bundles.length === 0) return new Set();
  const { text, values } = unnestInsert(
    'bundles',
    NEW_COLUMNS,
    { rows: bundles, chainId: chainId },
    'on conflict do nothing returning tx_hash, bundle_index',
  );
  const { rows } = await db.query<{ tx_hash: string; bundle_index: number }>(text, values);
  return new Set(rows.map((r) => `${r.tx_hash}:${r.bundle_index}`));
}

/** Sets what calldata tells about bundles stored before it was decoded (the repair pass). */
export async function updateDecoded(
  db: Queryable,
  chainId: number,
  bundles: Array<Pick<NewBundle, 'txHash' | 'bundleIndex' | 'beneficiary' | 'aggregated'>>,
): Promise<void> {
  if (bundles.length === 0) return;
  await db.query(
    `update bundles b set beneficiary = coalesce(b.beneficiary, v.beneficiary), aggregated = b.aggregated or v.aggregated
     from unnest($2::bytea[], $3::integer[], $4::bytea[], $5::boolean[]) as v(tx_hash, bundle_index, beneficiary, aggregated)
     where b.chain_id = $1 and b.tx_hash = v.tx_hash and b.bundle_index = v.bundle_index`,
    [
      chainId,
      bundles.map((b) => bytea(b.txHash)),
      bundles.map((b) => b.bundleIndex),
      bundles.map((b) => bytea(b.beneficiary)),
      bundles.map((b) => b.aggregated),
    ],
  );
}

/** Deletes the bundles above `blockNumber`; returns what they added per bundler and UTC day (bundler_days, daily_stats to rebuild). */
export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<BundlerDay[]> {
  const { rows } = await db.query<{ bundler: string; day: number; bundles: string; revenue: string; fees: string }>(
    `with removed as (
       delete from bundles where chain_id = $1 and block_number > $2
       returning bundler, (block_time / 86400)::integer as day, actual_gas_cost_sum, fee_share
     )
     select bundler, day, count(*) as bundles, sum(actual_gas_cost_sum)::text as revenue, coalesce(sum(fee_share), 0)::text as fees
     from removed group by bundler, day`,
    [chainId, blockNumber],
  );
  return rows.map((r) => ({
    bundler: r.bundler,
    day: r.day,
    bundles: Number(r.bundles),
    revenue: BigInt(r.revenue),
    fees: BigInt(r.fees),
  }));
}

/** The subgraph's Bundle (server/graphql); its id is `<transactionHash>-<bundleIndex>`. */
export const bundleView: EntityView = {
  from: 'bundles t left join bundle_transactions bt on bt.chain_id = t.chain_id and bt.tx_hash = t.tx_hash',
  block: 't.block_number',
  id: hashIndexId('t.tx_hash', 't.bundle_index', 'bytea'),
  fields: {
    transactionHash: column('t.tx_hash', 'Bytes', 'bytea'),
    bundleIndex: column('t.bundle_index', 'Int', 'int4'),
    blockNumber: column('t.block_number', 'BigInt', 'int8'),
    blockTime: { ...column('t.block_time', 'BigInt', 'int8'), order: 't.block_number' },
    // The first subgraph's name for the block time.
    timestamp: { ...column('t.block_time', 'BigInt', 'int8'), order: 't.block_number' },
    userOpsLength: column('t.ops_count', 'BigInt', 'int4'),
    bundler: column('t.bundler', 'Bytes', 'bytea'),
    beneficiary: column('t.beneficiary', 'Bytes', 'bytea', true),
    entryPoint: column('t.entry_point', 'Bytes', 'bytea'),
    success: column('coalesce(bt.status, true)', 'Boolean', 'bool'),
    transactionFee: column('bt.fee', 'BigInt', 'numeric', true),
    revenue: column('t.actual_gas_cost_sum', 'BigInt', 'numeric'),
    profit: column('t.actual_gas_cost_sum - coalesce(t.fee_share, bt.fee, 0)', 'BigInt', 'numeric'),
  },
};
