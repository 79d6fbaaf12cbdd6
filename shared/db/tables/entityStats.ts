import type { Queryable } from '../client.js';
import type { Page } from '../page.js';

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
    [chainId, kind, address],
  );
  return rows[0] ? toEntityStats(rows[0]) : null;
}

/** The kinds an address has on a network (searchEntry). */
export async function listKindsOf(db: Queryable, chainId: number, address: string): Promise<EntityKind[]> {
  const { rows } = await db.query<{ kind: EntityKind }>(
    `select kind from entity_stats where chain_id = $1 and address = $2`,
    [chainId, address],
  );
  return rows.map((r) => r.kind);
}

/** Top entities of a kind by ops count (ties by address). */
export async function listTopByUserOps(db: Queryable, chainId: number, kind: EntityKind, page: Page): Promise<EntityStats[]> {
  const { rows } = await db.query<EntityStatsRow>(
    `select ${COLUMNS} from entity_stats where chain_id = $1 and kind = $2
     order by user_ops_count desc, address limit $3 offset $4`,
    [chainId, kind, page.first, page.skip],
  );
  return rows.map(toEntityStats);
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
