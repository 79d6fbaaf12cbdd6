import type { Queryable } from '../client.js';

/** One HTTP attempt of a delivery, as logged for getWebhookDeliveries. */
export type AttemptRecord = {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  /** null when no response came back (timeout, connection refused, blocked address). */
  responseStatus: number | null;
  error: string | null;
  responseSnippet: string | null;
};

/** Logs an attempt; a no-op when the delivery is gone (its webhook was deleted mid-send). */
export async function insert(db: Queryable, a: AttemptRecord): Promise<void> {
  await db.query(
    `insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error, response_snippet)
     select $1, $2, $3, $4, $5, $6, $7 where exists (select 1 from webhook_deliveries where id = $1)
     on conflict (delivery_id, attempt) do nothing`,
    [a.deliveryId, a.attempt, a.startedAt, a.durationMs, a.responseStatus, a.error, a.responseSnippet],
  );
}

/** Logs many attempts in one statement (the dispatcher's batched success path). */
export async function insertMany(db: Queryable, attempts: AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return;
  const col = <K extends keyof AttemptRecord>(k: K) => attempts.map((a) => a[k]);
  await db.query(
    `insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error, response_snippet)
     select u.* from unnest($1::text[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[])
       as u(delivery_id, attempt, started_at, duration_ms, response_status, error, response_snippet)
     where exists (select 1 from webhook_deliveries d where d.id = u.delivery_id)
     on conflict (delivery_id, attempt) do nothing`,
    [col('deliveryId'), col('attempt'), col('startedAt'), col('durationMs'), col('responseStatus'), col('error'), col('responseSnippet')],
  );
}

export async function listByDeliveries(db: Queryable, deliveryIds: string[]): Promise<AttemptRecord[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await db.query<{
    delivery_id: string;
    attempt: number;
    started_at: Date | string;
    duration_ms: number;
    response_status: number | null;
    error: string | null;
    response_snippet: string | null;
  }>(
    `select delivery_id, attempt, started_at, duration_ms, response_status, error, response_snippet
       from webhook_attempts where delivery_id = any($1::text[]) order by delivery_id, attempt`,
    [deliveryIds],
  );
  return rows.map((r) => ({
    deliveryId: r.delivery_id,
    attempt: r.attempt,
    startedAt: new Date(r.started_at),
    durationMs: r.duration_ms,
    responseStatus: r.response_status,
    error: r.error,
    responseSnippet: r.response_snippet,
  }));
}
