import { bytea, type Queryable } from '../client.js';
import type { Page } from '../page.js';
import { bytesId, column, type EntityView } from '../entityView.js';
import { latestTotalDepositSql } from './entryPointDeposits.js';
import { beneficiaryOf } from './userOps.js';

/** Reads of `entity_stats`: running totals per bundler, paymaster, factory and beneficiary. */

export type EntityKind = 'bundler' | 'paymaster' | 'factory' | 'beneficiary';

export type EntityStats = {
  chainId: number;
  kind: EntityKind;
  address: string;
  userOpsCount: string;
  bundlesCount: string;
  accountsCount: string;
  actualGasCostSum: string;
  txFeeSum: string;
  firstSeenBlock: string;
  lastSeenBlock: string;
};

type EntityStatsRow = {
  chain_id: string;
  kind: EntityKind;
  address: string;
  user_ops_count: string;
  bundles_count: string;
  accounts_count: string;
  actual_gas_cost_sum: string;
  tx_fee_sum: string;
  first_seen_block: string;
  last_seen_block: string;
};

const toEntityStats = (r: EntityStatsRow): EntityStats => ({
  chainId: Number(r.chain_id),
  kind: r.kind,
  address: r.address,
  userOpsCount: r.user_ops_count,
  bundlesCount: r.bundles_count,
  accountsCount: r.accounts_count,
  actualGasCostSum: r.actual_gas_cost_sum,
  txFeeSum: r.tx_fee_sum,
  firstSeenBlock: r.first_seen_block,
  lastSeenBlock: r.last_seen_block,
});

const COLUMNS = `chain_id, kind, address, user_ops_count, bundles_count, accounts_count, actual_gas_cost_sum, tx_fee_sum,
  first_seen_block, last_seen_block`;

export async function find(db: Queryable, chainId: number, kind: EntityKind, address: string): Promise<EntityStats | null> {
  const { rows } = await db.query<EntityStatsRow>(
    `select ${COLUMNS} from entity_stats where chain_id = $1 and kind = $2 and address = $3`,
    [chainId, kind, bytea(address)],
  );
  return rows[0] ? toEntityStats(rows[0]) : null;
}

/** The kinds an address has on a network (searchEntry). */
export async function listKindsOf(db: Queryable, chainId: number, address: string): Promise<EntityKind[]> {
  const { rows } = await db.query<{ kind: EntityKind }>(`select kind from entity_stats where chain_id = $1 and address = $2`, [
    chainId,
    bytea(address),
  ]);
  return rows.map((r) => r.kind);
}

/** A page of the top entities of kind $2 on chain $1 by ops count (ties by address): limit $3, offset $4. */
const TOP_BY_USER_OPS = `select ${COLUMNS} from entity_stats where chain_id = $1 and kind = $2
  order by user_ops_count desc, address limit $3 offset $4`;

/** Top entities of a kind by ops count (ties by address). */
export async function listTopByUserOps(db: Queryable, chainId: number, kind: EntityKind, page: Page): Promise<EntityStats[]> {
  const { rows } = await db.query<EntityStatsRow>(TOP_BY_USER_OPS, [chainId, kind, page.first, page.skip]);
  return rows.map(toEntityStats);
}

/** listTopByUserOps with each entity's EntryPoint deposit (wei, null when none), in the same statement. */
export async function listTopByUserOpsWithDeposits(
  db: Queryable,
  chainId: number,
  kind: EntityKind,
  page: Page,
): Promise<Array<EntityStats & { totalDeposit: string | null }>> {
  const { rows } = await db.query<EntityStatsRow & { total_deposit: string | null }>(
    // The deposit is looked up outside the page's subquery: rows skipped by the offset would be projected too.
    `select page.*, ${latestTotalDepositSql('$1', 'page.address')} as total_deposit from (${TOP_BY_USER_OPS}) page
     order by page.user_ops_count desc, page.address`,
    [chainId, kind, page.first, page.skip],
  );
  return rows.map((r) => ({ ...toEntityStats(r), totalDeposit: r.total_deposit }));
}

/** Top factories by accounts deployed (ties by address, then network), over several networks. */
export async function listTopFactories(db: Queryable, chainIds: number[], page: Page): Promise<EntityStats[]> {
  const { rows } = await db.query<EntityStatsRow>(
    `select ${COLUMNS} from entity_stats where chain_id = any($1::bigint[]) and kind = 'factory'
     order by accounts_count desc, address, chain_id limit $2 offset $3`,
    [chainIds, page.first, page.skip],
  );
  return rows.map(toEntityStats);
}

// Writes (the indexer). Every total derives from user_ops by the entity's role column, so the
// incremental upsert and the reorg recompute agree by construction:
//   user_ops_count = ops, bundles_count = distinct bundles of those ops, accounts_count = those ops
//   that deployed their sender, actual_gas_cost_sum = Σ actualGasCost, tx_fee_sum = Σ fee of the
//   distinct bundle transactions holding those ops; first/last seen = their min/max block.

/** What one batch adds to an entity's totals. */
export type EntityIncrement = {
  kind: EntityKind;
  address: string;
  userOps: number;
  bundles: number;
  accounts: number;
  actualGasCost: bigint;
  txFee: bigint;
  firstSeenBlock: number;
  firstSeenDay: number;
  lastSeenBlock: number;
};

export async function upsertIncrements(db: Queryable, chainId: number, rows: EntityIncrement[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into entity_stats (chain_id, kind, address, user_ops_count, bundles_count, accounts_count, actual_gas_cost_sum,
       tx_fee_sum, first_seen_block, first_seen_day, last_seen_block)
     select $1, * from unnest($2::text[], $3::bytea[], $4::bigint[], $5::bigint[], $6::bigint[], $7::numeric[], $8::numeric[],
       $9::bigint[], $10::integer[], $11::bigint[])
     on conflict (chain_id, kind, address) do update set
       user_ops_count = entity_stats.user_ops_count + excluded.user_ops_count,
       bundles_count = entity_stats.bundles_count + excluded.bundles_count,
       accounts_count = entity_stats.accounts_count + excluded.accounts_count,
       actual_gas_cost_sum = entity_stats.actual_gas_cost_sum + excluded.actual_gas_cost_sum,
       tx_fee_sum = entity_stats.tx_fee_sum + excluded.tx_fee_sum,
       first_seen_block = least(entity_stats.first_seen_block, excluded.first_seen_block),
       first_seen_day = least(entity_stats.first_seen_day, excluded.first_seen_day),
       last_seen_block = greatest(entity_stats.last_seen_block, excluded.last_seen_block)`,
    [
      chainId,
      rows.map((r) => r.kind),
      rows.map((r) => bytea(r.address)),
      rows.map((r) => r.userOps),
      rows.map((r) => r.bundles),
      rows.map((r) => r.accounts),
      rows.map((r) => r.actualGasCost.toString()),
      rows.map((r) => r.txFee.toString()),
      rows.map((r) => r.firstSeenBlock),
      rows.map((r) => r.firstSeenDay),
      rows.map((r) => r.lastSeenBlock),
    ],
  );
}

/** SQL for the address of the user_ops row `o` in each role (the beneficiary is mostly its bundle's: beneficiaryOf). */
const ROLE_OF_OP: Record<EntityKind, string> = {
  bundler: 'o.bundler',
  paymaster: 'o.paymaster',
  factory: 'o.factory',
  beneficiary: beneficiaryOf('o'),
};

/** Rebuilds the totals of `addresses` of one kind from user_ops (after a reorg removed rows). */
export async function recompute(db: Queryable, chainId: number, kind: EntityKind, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return;
  const role = ROLE_OF_OP[kind];
  const addressParam = addresses.map((a) => bytea(a));
  await db.query(`delete from entity_stats where chain_id = $1 and kind = $2 and address = any($3::bytea[])`, [
    chainId,
    kind,
    addressParam,
  ]);
  await db.query(
    `insert into entity_stats (chain_id, kind, address, user_ops_count, bundles_count, accounts_count, actual_gas_cost_sum,
       tx_fee_sum, first_seen_block, first_seen_day, last_seen_block)
     with ops as (
       select o.chain_id, ${role} as address, o.tx_hash, o.bundle_index, o.factory, o.actual_gas_cost, o.block_number, o.block_time
       from user_ops o where o.chain_id = $1 and ${role} = any($3::bytea[])
     )
     select o.chain_id, $2, o.address, count(*), count(distinct (o.tx_hash, o.bundle_index)), count(o.factory),
            sum(o.actual_gas_cost),
            coalesce((select sum(t.fee) from bundle_transactions t where t.chain_id = o.chain_id
                      and t.tx_hash in (select distinct x.tx_hash from ops x where x.address = o.address)), 0),
            min(o.block_number), min(o.block_time) / 86400, max(o.block_number)
     from ops o
     group by o.chain_id, o.address`,
    [chainId, kind, addressParam],
  );
}

// The subgraph's Paymaster, Factory and Bundler (server/graphql): one kind of entity_stats each, id = address.

const statsView = (kind: EntityKind, fields: EntityView['fields']): EntityView => ({
  from: 'entity_stats t',
  where: `t.kind = '${kind}'`,
  id: bytesId('t.address'),
  fields: {
    address: column('t.address', 'Bytes', 'bytea'),
    userOpsCount: column('t.user_ops_count', 'BigInt', 'int8'),
    firstSeenBlock: column('t.first_seen_block', 'BigInt', 'int8'),
    lastSeenBlock: column('t.last_seen_block', 'BigInt', 'int8'),
    ...fields,
  },
});

export const paymasterView = statsView('paymaster', {
  gasSponsored: column('t.actual_gas_cost_sum', 'BigInt', 'numeric'),
  // As of its latest Deposited event, as getTopPaymasters answers it.
  totalDeposit: column(`coalesce(${latestTotalDepositSql('t.chain_id', 't.address')}, 0)`, 'BigInt', 'numeric'),
});

export const factoryView = statsView('factory', {
  accountsCount: column('t.accounts_count', 'BigInt', 'int8'),
});

export const bundlerView = statsView('bundler', {
  bundlesCount: column('t.bundles_count', 'BigInt', 'int8'),
  actualGasCostSum: column('t.actual_gas_cost_sum', 'BigInt', 'numeric'),
  transactionFeeSum: column('t.tx_fee_sum', 'BigInt', 'numeric'),
  // What it earned: its ops' actualGasCost less its transactions' fees; may be negative.
  profit: column('t.actual_gas_cost_sum - t.tx_fee_sum', 'BigInt', 'numeric'),
});
