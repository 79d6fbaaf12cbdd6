import { prepared, type Queryable } from '../client.js';
import type { DailyMetric } from '../../models/entities.js';
import { ADDRESS_HEX_DIGITS } from '../../models/primitives.js';
import { column, type EntityView } from '../entityView.js';
import { withJsonText } from '../../jsonText.js';

/**
 * Reads of `daily_stats` (per network and UTC day) as the spec's DailyMetric: day counts as
 * stored, cumulative totals as window sums since the first day, entity totals from
 * `entity_stats.first_seen_day`, active wallets from `daily_active_wallets` (a closed day's stored list).
 */

type DailyRow = {
  day: number;
  user_ops: string;
  bundles: string;
  wallets_created: string;
  gas_cost_collected: string;
  bundler_profit: string;
  active_wallets: string;
  user_ops_total: string;
  bundles_total: string;
  wallets_created_total: string;
  gas_cost_collected_total: string;
  paymaster_total: string;
  factory_total: string;
  bundler_total: string;
};

/** A day's figures without its list of active wallets (the status page's chart). */
export type DailyCounts = Omit<DailyMetric, 'activeWallets'>;

const toDailyCounts = (r: DailyRow): DailyCounts => ({
  userOpsDaily: r.user_ops,
  bundleDaily: r.bundles,
  walletsCreatedDaily: r.wallets_created,
  gasCostCollectedDaily: r.gas_cost_collected,
  bundlerProfitDaily: r.bundler_profit,
  userOpsTotal: r.user_ops_total,
  bundlesTotal: r.bundles_total,
  walletsCreatedTotal: r.wallets_created_total,
  gasCostCollectedTotal: r.gas_cost_collected_total,
  activeWalletsDaily: r.active_wallets,
  daySinceEpoch: String(r.day),
  paymasterTotal: r.paymaster_total,
  factoryTotal: r.factory_total,
  bundlerTotal: r.bundler_total,
});

/**
 * A day's metric whose active wallets stay the bytes of a JSON array until someone reads them: an
 * answer writes the bytes as they are (shared/jsonText.ts); the array is parsed only when read.
 */
export function dailyMetric(counts: DailyCounts, activeWalletsJson: Buffer): DailyMetric {
  let wallets: string[] | undefined;
  const metric = Object.defineProperty({ ...counts } as DailyMetric, 'activeWallets', {
    enumerable: true,
    get: () => (wallets ??= JSON.parse(activeWalletsJson.toString('latin1')) as string[]),
  });
  return withJsonText(metric, () => [`${JSON.stringify(counts).slice(0, -1)},"activeWallets":`, activeWalletsJson, '}']);
}

/**
 * Which day's list of active wallets can be known without reading it: outside a reorg wallets are
 * only ever added to a day, each in the same transaction as its count, so a day's list changes only
 * when its count does, or in a reorg (the epoch moves). `day:count` keys.
 */
export const walletListKey = (day: number | string, activeWallets: number | string) => `${day}:${activeWallets}`;

/** Days' lists the caller already holds (walletListKey keys, valid under reorg epoch `epoch`): not read again. */
export type HeldWalletLists = { epoch: number; keys: readonly string[] };

export type RecentDay = {
  counts: DailyCounts;
  /** The day's active wallets as the bytes of a JSON array, in address order; null when held by the caller or not asked for. */
  activeWalletsJson: Buffer | null;
};

/** wallet_addresses: the day's active wallets' bytes one after the other (read as 0x-hex), in address order. */
type RecentRow = DailyRow & { reorg_epoch: number; wallet_addresses: string | null };

/** listRecent's statement, planned once per connection (it planned in as long as it ran). */
const LIST_RECENT = prepared(`with bounds as (
     select max(day) - $2 as before_day from daily_stats where chain_id = $1
   ), earlier as (
     -- Totals before the asked days as one plain sum, the running totals over the asked days only
     -- (a window over every day cost more than the rest of the statement).
     select coalesce(sum(d.user_ops), 0) as user_ops, coalesce(sum(d.bundles), 0) as bundles,
            coalesce(sum(d.wallets_created), 0) as wallets_created, coalesce(sum(d.gas_cost_collected), 0) as gas_cost_collected
     from daily_stats d, bounds where d.chain_id = $1 and d.day <= bounds.before_day
   ), totals as (
     select d.day, d.user_ops, d.bundles, d.wallets_created, d.gas_cost_collected, d.bundle_fees, d.active_wallets, d.active_wallet_list,
            e.user_ops + sum(d.user_ops) over w as user_ops_total, e.bundles + sum(d.bundles) over w as bundles_total,
            e.wallets_created + sum(d.wallets_created) over w as wallets_created_total,
            e.gas_cost_collected + sum(d.gas_cost_collected) over w as gas_cost_collected_total
     from daily_stats d, bounds, earlier e where d.chain_id = $1 and d.day > bounds.before_day
     window w as (order by d.day)
   ), epoch as (
     select coalesce((select reorg_epoch from indexer_state where chain_id = $1), 0) as reorg_epoch
   )
   select t.day, t.user_ops, t.bundles, t.wallets_created, t.gas_cost_collected::text as gas_cost_collected,
          (t.gas_cost_collected - t.bundle_fees)::text as bundler_profit, t.active_wallets, t.user_ops_total::text as user_ops_total, t.bundles_total::text as bundles_total,
          t.wallets_created_total::text as wallets_created_total,
          t.gas_cost_collected_total::text as gas_cost_collected_total,
          (select count(*) from entity_stats e where e.chain_id = $1 and e.kind = 'paymaster' and e.first_seen_day <= t.day) as paymaster_total,
          (select count(*) from entity_stats e where e.chain_id = $1 and e.kind = 'factory' and e.first_seen_day <= t.day) as factory_total,
          (select count(*) from entity_stats e where e.chain_id = $1 and e.kind = 'bundler' and e.first_seen_day <= t.day) as bundler_total,
          epoch.reorg_epoch,
          -- Thousands of addresses a day, as one value: their bytes one after the other, made the
          -- text of a JSON array by addressListJson. A closed day holds its list ready
          -- (closePastDays); the latest day's is read in the primary key's order, so no sort. Not
          -- read at all when not asked for or held (a case evaluates only its branch).
          case when $3 and not (epoch.reorg_epoch = $4 and t.day || ':' || t.active_wallets = any($5::text[]))
            then coalesce(t.active_wallet_list, (select string_agg(s.address, ''::bytea) from (
                 select w.address from daily_active_wallets w where w.chain_id = $1 and w.day = t.day order by w.address
               ) s), ''::bytea)
          end as wallet_addresses
   from totals t, epoch
   where t.user_ops > 0
   order by t.day desc`);

/**
 * The days with activity among the `days` UTC days ending with the network's latest active day,
 * newest first, with their active wallets unless `wallets` is false or the caller holds them; and
 * the reorg epoch of the same snapshot (what a held list is valid under).
 */
export async function listRecent(
  db: Queryable,
  chainId: number,
  days: number,
  wallets: { held: HeldWalletLists | null } | false,
): Promise<{ epoch: number; days: RecentDay[] }> {
  const { rows } = await db.query<RecentRow>(LIST_RECENT, [
    chainId,
    days,
    wallets !== false,
    wallets ? (wallets.held?.epoch ?? -1) : -1,
    wallets ? (wallets.held?.keys ?? []) : [],
  ]);
  return {
    epoch: rows[0]?.reorg_epoch ?? 0,
    days: rows.map((r) => ({
      counts: toDailyCounts(r),
      activeWalletsJson: r.wallet_addresses === null ? null : addressListJson(r.wallet_addresses),
    })),
  };
}

/** The characters addressListJson writes around the digits, as bytes. */
const CHAR = { open: 0x5b, close: 0x5d, quote: 0x22, comma: 0x2c, zero: 0x30, x: 0x78 } as const;

/**
 * A list of addresses (their bytes one after the other, read as 0x-hex) as the bytes of a JSON
 * array of 0x-hex strings, written into the answer as they are (shared/jsonText.ts): thousands of
 * addresses a day cost Node neither a string each nor serialisation. Byte by byte into one buffer:
 * 10,000 addresses in 1.4–2.8 ms on a loaded machine, where a Buffer.write and a copy per address
 * took 3.2–5.0 ms and a regex replace 2.7 ms.
 */
export function addressListJson(list: string): Buffer {
  const digits = Buffer.from(list, 'latin1');
  const count = (digits.length - 2) / ADDRESS_HEX_DIGITS;
  // '[' and ']', and per address `"0x…"` (44 bytes) and a comma but after the last.
  const json = Buffer.allocUnsafe(count === 0 ? 2 : count * 45 + 1);
  json[0] = CHAR.open;
  let at = 1;
  for (let from = 2; from < digits.length;) {
    if (at > 1) json[at++] = CHAR.comma;
    json[at++] = CHAR.quote;
    json[at++] = CHAR.zero;
    json[at++] = CHAR.x;
    for (const end = from + ADDRESS_HEX_DIGITS; from < end;) json[at++] = digits[from++]!;
    json[at++] = CHAR.quote;
  }
  json[at] = CHAR.close;
  return json;
}

/** Network-wide totals (getGlobalCounts). */
export async function sumAll(db: Queryable, chainId: number): Promise<{ userOps: string; bundles: string; walletsCreated: string }> {
  const { rows } = await db.query<{ user_ops: string; bundles: string; wallets_created: string }>(
    `select coalesce(sum(user_ops), 0)::text as user_ops, coalesce(sum(bundles), 0)::text as bundles,
            coalesce(sum(wallets_created), 0)::text as wallets_created
     from daily_stats where chain_id = $1`,
    [chainId],
  );
  const r = rows[0]!;
  return { userOps: r.user_ops, bundles: r.bundles, walletsCreated: r.wallets_created };
}

// Writes (the indexer). Per UTC day: user_ops, gas_cost_collected (Σ actualGasCost) and
// wallets_created (ops that deployed their sender) from user_ops; bundles and bundle_fees (Σ their
// shares of their transactions' fees) from bundles;
// active_wallets (the count) and, once the day is past, active_wallet_list from daily_active_wallets.

export type DailyIncrement = {
  day: number;
  userOps: number;
  bundles: number;
  walletsCreated: number;
  gasCostCollected: bigint;
  /** Σ the new bundles' shares of their transactions' fees. */
  bundleFees: bigint;
  activeWallets: number;
};

export async function upsertIncrements(db: Queryable, chainId: number, rows: DailyIncrement[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into daily_stats (chain_id, day, user_ops, bundles, wallets_created, gas_cost_collected, active_wallets, bundle_fees)
     select $1, * from unnest($2::integer[], $3::bigint[], $4::bigint[], $5::bigint[], $6::numeric[], $7::bigint[], $8::numeric[])
     on conflict (chain_id, day) do update set
       user_ops = daily_stats.user_ops + excluded.user_ops,
       bundles = daily_stats.bundles + excluded.bundles,
       wallets_created = daily_stats.wallets_created + excluded.wallets_created,
       gas_cost_collected = daily_stats.gas_cost_collected + excluded.gas_cost_collected,
       bundle_fees = daily_stats.bundle_fees + excluded.bundle_fees,
       active_wallets = daily_stats.active_wallets + excluded.active_wallets,
       -- New wallets on a day already closed (not on a chain, whose block times never decrease):
       -- its list is rebuilt by closePastDays.
       active_wallet_list = case when excluded.active_wallets > 0 then null else daily_stats.active_wallet_list end`,
    [
      chainId,
      rows.map((r) => r.day),
      rows.map((r) => r.userOps),
      rows.map((r) => r.bundles),
      rows.map((r) => r.walletsCreated),
      rows.map((r) => r.gasCostCollected.toString()),
      rows.map((r) => r.activeWallets),
      rows.map((r) => r.bundleFees.toString()),
    ],
  );
}

/** Rebuilds `days` from the base tables (daily_active_wallets must be rebuilt first). */
export async function recompute(db: Queryable, chainId: number, days: number[]): Promise<void> {
  if (days.length === 0) return;
  await db.query(`delete from daily_stats where chain_id = $1 and day = any($2::integer[])`, [chainId, days]);
  await db.query(
    `insert into daily_stats (chain_id, day, user_ops, bundles, wallets_created, gas_cost_collected, active_wallets, bundle_fees)
     select $1, d.day,
       (select count(*) from user_ops o where o.chain_id = $1 and o.block_time / 86400 = d.day),
       (select count(*) from bundles b where b.chain_id = $1 and b.block_time / 86400 = d.day),
       (select count(o.factory) from user_ops o where o.chain_id = $1 and o.block_time / 86400 = d.day),
       (select coalesce(sum(o.actual_gas_cost), 0) from user_ops o where o.chain_id = $1 and o.block_time / 86400 = d.day),
       (select count(*) from daily_active_wallets w where w.chain_id = $1 and w.day = d.day),
       (select coalesce(sum(b.fee_share), 0) from bundles b where b.chain_id = $1 and b.block_time / 86400 = d.day)
     from unnest($2::integer[]) as d(day)`,
    [chainId, days],
  );
  // A day the reorg emptied has no row at all, as if it had never been seen.
  await db.query(`delete from daily_stats where chain_id = $1 and day = any($2::integer[]) and user_ops = 0 and bundles = 0`, [
    chainId,
    days,
  ]);
  await closePastDays(db, chainId);
}

/**
 * Stores the active wallets of each day before the network's latest day with activity that does not
 * hold them yet (new rows, rows a reorg rebuilt): block times never decrease along the chain, so
 * such a day gets no more ops and its list is final (no bytes when it had none). listRecent reads
 * it instead of aggregating daily_active_wallets on every call. The migration that adds the lists
 * runs the same statement for the days a deployment already holds. The list is bytes: the
 * addresses one after the other (half the size of the comma-separated hex).
 */
export async function closePastDays(db: Queryable, chainId: number): Promise<void> {
  await db.query(
    `update daily_stats d
     set active_wallet_list = coalesce(
       (select string_agg(w.address, ''::bytea order by w.address) from daily_active_wallets w where w.chain_id = d.chain_id and w.day = d.day),
       ''::bytea)
     where d.chain_id = $1 and d.active_wallet_list is null
       and d.day < (select max(l.day) from daily_stats l where l.chain_id = $1)`,
    [chainId],
  );
}

// The subgraph's DailyMetric and GlobalCounter (server/graphql). A network has a few hundred days at
// most, so the running totals are window sums over all of them.

const dailyTotals = `(
  select d.*, sum(d.user_ops) over w as user_ops_total, sum(d.bundles) over w as bundles_total,
         sum(d.wallets_created) over w as wallets_created_total, sum(d.gas_cost_collected) over w as gas_cost_collected_total
  from daily_stats d where d.chain_id = $1 window w as (order by d.day)
) t`;

/** id = the UTC day number (days since the epoch). */
export const dailyMetricView: EntityView = {
  from: dailyTotals,
  id: { sql: 't.day::text', order: ['t.day'], parts: [{ column: 't.day', pg: 'int4' }] },
  fields: {
    daySinceEpoch: column('t.day', 'BigInt', 'int4'),
    userOpsDaily: column('t.user_ops', 'BigInt', 'int8'),
    bundleDaily: column('t.bundles', 'BigInt', 'int8'),
    walletsCreatedDaily: column('t.wallets_created', 'BigInt', 'int8'),
    gasCostCollectedDaily: column('t.gas_cost_collected', 'BigInt', 'numeric'),
    // What the day's bundlers earned: their ops' actualGasCost less their transactions' fees.
    bundlerProfitDaily: column('t.gas_cost_collected - t.bundle_fees', 'BigInt', 'numeric'),
    activeWalletsDaily: column('t.active_wallets', 'BigInt', 'int8'),
    userOpsTotal: column('t.user_ops_total', 'BigInt', 'numeric'),
    bundlesTotal: column('t.bundles_total', 'BigInt', 'numeric'),
    walletsCreatedTotal: column('t.wallets_created_total', 'BigInt', 'numeric'),
    gasCostCollectedTotal: column('t.gas_cost_collected_total', 'BigInt', 'numeric'),
  },
};

/** One row per network with activity, id 'global' (getGlobalCounts). */
export const globalCounterView: EntityView = {
  from: `(
    select d.chain_id, 'global'::text as id, sum(d.user_ops) as user_ops, sum(d.bundles) as bundles,
           sum(d.wallets_created) as wallets_created, sum(d.gas_cost_collected) as gas_cost_collected
    from daily_stats d where d.chain_id = $1 group by d.chain_id
  ) t`,
  id: { sql: 't.id', order: ['t.id'] },
  fields: {
    userOpCounter: column('t.user_ops', 'BigInt', 'numeric'),
    bundleCounter: column('t.bundles', 'BigInt', 'numeric'),
    walletsCreated: column('t.wallets_created', 'BigInt', 'numeric'),
    gasCostCollected: column('t.gas_cost_collected', 'BigInt', 'numeric'),
  },
};
