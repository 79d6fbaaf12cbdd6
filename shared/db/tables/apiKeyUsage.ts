import type { Queryable } from '../client.js';

/** Requests counted for one key in one hour, endpoint, network and status class. */
export type UsageCount = {
  apiKeyId: string;
  /** The hour's start (UTC). */
  hour: Date;
  endpoint: string;
  /** '' when the call named no network. */
  network: string;
  /** 2, 3, 4 or 5. */
  statusClass: number;
  requests: number;
};

/**
 * Adds a batch of counts (a web process's flush): each row's requests are added to what other
 * processes flushed, so the stored sum is exact.
 */
export async function addCounts(db: Queryable, counts: UsageCount[]): Promise<void> {
  if (counts.length === 0) return;
  await db.query(
    `insert into api_key_usage (api_key_id, hour, endpoint, network, status_class, requests)
     select * from unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::smallint[], $6::bigint[])
     on conflict (api_key_id, hour, endpoint, network, status_class)
     do update set requests = api_key_usage.requests + excluded.requests`,
    [
      counts.map((c) => c.apiKeyId),
      counts.map((c) => c.hour.toISOString()),
      counts.map((c) => c.endpoint),
      counts.map((c) => c.network),
      counts.map((c) => c.statusClass),
      counts.map((c) => c.requests),
    ],
  );
}

/** Deletes the hours before `before` (the retention setting). */
export async function deleteBefore(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query(`delete from api_key_usage where hour < $1`, [before.toISOString()]);
  return rowCount ?? 0;
}

/**
 * A key's stored requests since `day` and since `month` (the quotas' starting counts), 4xx answers
 * aside: those include the refusals (rate limit, quota, scope), which a quota does not count.
 */
export async function answeredSince(db: Queryable, apiKeyId: string, day: Date, month: Date): Promise<{ day: number; month: number }> {
  const { rows } = await db.query<{ day: string | null; month: string | null }>(
    `select sum(requests) filter (where hour >= $2) as day, sum(requests) as month
     from api_key_usage where api_key_id = $1 and hour >= $3 and status_class <> 4`,
    [apiKeyId, day.toISOString(), month.toISOString()],
  );
  return { day: Number(rows[0]?.day ?? 0), month: Number(rows[0]?.month ?? 0) };
}
