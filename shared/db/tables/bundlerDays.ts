import { bytea, type Queryable } from '../client.js';

/**
 * `bundler_days`: per bundler and UTC day, its bundles, their revenue (Σ their ops' actualGasCost)
 * and their fees (Σ their shares of their transactions' fees, indexer/decode/bundleFees.ts). A
 * bundler's totals over the last N days read N rows at most. The indexer adds each batch's new
 * bundles; a reorg subtracts the bundles it removes, so the rows always equal the sums over
 * `bundles` by bundler and day.
 */

export type BundlerDay = { bundler: string; day: number; bundles: number; revenue: bigint; fees: bigint };

/** A bundler's totals over a window of days. */
export type BundlerTotals = { bundles: string; revenue: string; fees: string };

const unnested = `unnest($2::bytea[], $3::integer[], $4::bigint[], $5::numeric[], $6::numeric[]) as v(bundler, day, bundles, revenue, fees)`;

const params = (chainId: number, rows: BundlerDay[]) => [
  chainId,
  rows.map((r) => bytea(r.bundler)),
  rows.map((r) => r.day),
  rows.map((r) => r.bundles),
  rows.map((r) => r.revenue.toString()),
  rows.map((r) => r.fees.toString()),
];

export async function upsertIncrements(db: Queryable, chainId: number, rows: BundlerDay[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into bundler_days (chain_id, bundler, day, bundles, revenue, fees)
     select $1, v.bundler, v.day, v.bundles, v.revenue, v.fees from ${unnested}
     on conflict (chain_id, bundler, day) do update set
       bundles = bundler_days.bundles + excluded.bundles,
       revenue = bundler_days.revenue + excluded.revenue,
       fees = bundler_days.fees + excluded.fees`,
    params(chainId, rows),
  );
}

/** Takes out what a reorg removed (bundles.deleteAbove's answer); a day left without bundles goes. */
export async function subtract(db: Queryable, chainId: number, rows: BundlerDay[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `update bundler_days d set bundles = d.bundles - v.bundles, revenue = d.revenue - v.revenue, fees = d.fees - v.fees
     from ${unnested}
     where d.chain_id = $1 and d.bundler = v.bundler and d.day = v.day`,
    params(chainId, rows),
  );
  await db.query(
    `delete from bundler_days d using ${unnested}
     where d.chain_id = $1 and d.bundler = v.bundler and d.day = v.day and d.bundles <= 0`,
    params(chainId, rows),
  );
}

/**
 * Each of `bundlers`' totals over the `days` UTC days ending with the network's latest day with
 * activity (as getDailyMetrics counts days), or over every day when `days` is null; a bundler
 * without bundles in the window is absent.
 */
export async function totals(db: Queryable, chainId: number, bundlers: string[], days: number | null): Promise<Map<string, BundlerTotals>> {
  if (bundlers.length === 0) return new Map();
  const { rows } = await db.query<{ bundler: string; bundles: string; revenue: string; fees: string }>(
    `select bundler, sum(bundles)::text as bundles, sum(revenue)::text as revenue, sum(fees)::text as fees
     from bundler_days
     where chain_id = $1 and bundler = any($2::bytea[])
       and ($3::integer is null or day > (select max(d.day) from daily_stats d where d.chain_id = $1) - $3::integer)
     group by bundler`,
    [chainId, bundlers.map((b) => bytea(b)), days],
  );
  return new Map(rows.map((r) => [r.bundler, { bundles: r.bundles, revenue: r.revenue, fees: r.fees }]));
}
