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

/** Which hours a usage query reads: [from, to), optionally one key's only. */
export type UsageRange = { from: Date; to: Date; apiKeyId?: string };

/** Requests summed over some of the counted rows, split by status class as operators read them. */
export type UsageSums = {
  requests: number;
  /** Requests answered 4xx (refusals: bad input, 401/403, 429). */
  clientErrors: number;
  /** Requests answered 5xx. */
  serverErrors: number;
};

export type KeyUsage = UsageSums & { apiKeyId: string; prefix: string; name: string };

type SumsRow = { requests: string; client_errors: string; server_errors: string };

const SUMS = `sum(u.requests) as requests,
  coalesce(sum(u.requests) filter (where u.status_class = 4), 0) as client_errors,
  coalesce(sum(u.requests) filter (where u.status_class = 5), 0) as server_errors`;

const toSums = (r: SumsRow): UsageSums => ({
  requests: Number(r.requests),
  clientErrors: Number(r.client_errors),
  serverErrors: Number(r.server_errors),
});

/** The range's condition on `u` ($1 from, $2 to, $3 the key or null). */
const IN_RANGE = `u.hour >= $1 and u.hour < $2 and ($3::bigint is null or u.api_key_id = $3)`;
const rangeParams = (range: UsageRange) => [range.from.toISOString(), range.to.toISOString(), range.apiKeyId ?? null];

/** The `limit` keys with the most requests in the range (most first). */
export async function topKeys(db: Queryable, range: UsageRange, limit: number): Promise<KeyUsage[]> {
  const { rows } = await db.query<SumsRow & { api_key_id: string; prefix: string; name: string }>(
    `select u.api_key_id, k.prefix, k.name, ${SUMS}
     from api_key_usage u join api_keys k on k.id = u.api_key_id
     where ${IN_RANGE}
     group by u.api_key_id, k.prefix, k.name
     order by sum(u.requests) desc, u.api_key_id
     limit $4`,
    [...rangeParams(range), limit],
  );
  return rows.map((r) => ({ apiKeyId: String(r.api_key_id), prefix: r.prefix, name: r.name, ...toSums(r) }));
}

/**
 * Per key and per UTC day or hour, for the `limit` keys with the most requests in the range (a
 * chart's series): periods without requests are absent.
 */
export async function perKeyPerPeriod(
  db: Queryable,
  range: UsageRange,
  period: 'day' | 'hour',
  limit: number,
): Promise<Array<KeyUsage & { period: Date }>> {
  const { rows } = await db.query<SumsRow & { api_key_id: string; prefix: string; name: string; period: Date }>(
    `with top as (
       select u.api_key_id, sum(u.requests) as total from api_key_usage u where ${IN_RANGE}
       group by u.api_key_id order by total desc, u.api_key_id limit $4
     )
     select u.api_key_id, k.prefix, k.name, date_trunc('${period === 'day' ? 'day' : 'hour'}', u.hour, 'UTC') as period, ${SUMS}
     from api_key_usage u join top on top.api_key_id = u.api_key_id join api_keys k on k.id = u.api_key_id
     where ${IN_RANGE}
     group by u.api_key_id, k.prefix, k.name, period, top.total
     order by period, top.total desc, u.api_key_id`,
    [...rangeParams(range), limit],
  );
  return rows.map((r) => ({
    apiKeyId: String(r.api_key_id),
    prefix: r.prefix,
    name: r.name,
    period: new Date(r.period),
    ...toSums(r),
  }));
}

/** Per endpoint (every key's, or the range's key's), the busiest `limit` first. */
export async function perEndpoint(db: Queryable, range: UsageRange, limit: number): Promise<Array<UsageSums & { endpoint: string }>> {
  const { rows } = await db.query<SumsRow & { endpoint: string }>(
    `select u.endpoint, ${SUMS} from api_key_usage u where ${IN_RANGE}
     group by u.endpoint order by sum(u.requests) desc, u.endpoint limit $4`,
    [...rangeParams(range), limit],
  );
  return rows.map((r) => ({ endpoint: r.endpoint, ...toSums(r) }));
}

/**
 * The stored requests since `day` and since `month` of every key whose quota `quotaHolderId` holds
 * (a key and the keys rotated from it: the quotas' starting counts), 4xx answers aside: those
 * include the refusals (rate limit, quota, scope), which a quota does not count.
 */
export async function answeredSince(db: Queryable, quotaHolderId: string, day: Date, month: Date): Promise<{ day: number; month: number }> {
  const { rows } = await db.query<{ day: string | null; month: string | null }>(
    `select sum(requests) filter (where hour >= $2) as day, sum(requests) as month
     from api_key_usage
     where api_key_id in (select id from api_keys where coalesce(quota_holder_id, id) = $1) and hour >= $3 and status_class <> 4`,
    [quotaHolderId, day.toISOString(), month.toISOString()],
  );
  return { day: Number(rows[0]?.day ?? 0), month: Number(rows[0]?.month ?? 0) };
}
