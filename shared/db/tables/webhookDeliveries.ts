import type { WebhookDelivery } from '../../models/webhookDelivery.js';
import { bytea, type Queryable } from '../client.js';
import type { AttemptRecord } from './webhookAttempts.js';

/**
 * Deliveries: one row per (webhook, event), the dispatcher's source of truth. Status machine:
 * pending → delivered | failed (retries exhausted) | cancelled (webhook disabled, op reorged out);
 * a replay puts any of them back to pending. While pending, `next_attempt_at` is when it is due;
 * a claim moves it one lease ahead, so a dispatcher that dies mid-send loses nothing.
 */

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export type NewDelivery = {
  id: string;
  webhookId: string;
  eventKey: string;
  eventType: string;
  chainId: number;
  userOpHash: string | null;
  body: string;
};

/** Rows per INSERT: 7 parameters each, far below the protocol's 65 535. */
const INSERT_CHUNK = 500;

/**
 * Inserts the deliveries that do not exist yet (unique per webhook and event); returns how many.
 * Bodies are large: one parameter each in a multi-row VALUES is about twice as fast as a text[]
 * array, which the driver must escape and the server parse.
 */
export async function insertMany(db: Queryable, deliveries: NewDelivery[]): Promise<number> {
  let inserted = 0;
  for (let from = 0; from < deliveries.length; from += INSERT_CHUNK) {
    const chunk = deliveries.slice(from, from + INSERT_CHUNK);
    const params: unknown[] = [];
    const rows = chunk.map((d) => {
      const n = params.push(d.id, d.webhookId, d.eventKey, d.eventType, d.chainId, bytea(d.userOpHash), d.body);
      return `($${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}::bigint, $${n - 1}::bytea, $${n}, now())`;
    });
    const { rowCount } = await db.query(
      `insert into webhook_deliveries (id, webhook_id, event_key, event_type, chain_id, user_op_hash, body, next_attempt_at)
       values ${rows.join(', ')}
       on conflict (webhook_id, event_key) do nothing`,
      params,
    );
    inserted += rowCount;
  }
  return inserted;
}

/** A delivery one dispatcher has claimed for one attempt, with what it needs to send it. */
export type ClaimedDelivery = {
  id: string;
  webhookId: string;
  eventType: string;
  body: string;
  /** The number of this attempt (1 for the first). */
  attempt: number;
  createdAt: Date;
  url: string;
  secretCiphertext: string;
};

/**
 * Claims up to `limit` due deliveries of enabled webhooks, at most `perWebhook` of any one webhook
 * and none of the `skipWebhooks` (those this dispatcher already keeps busy), so one slow endpoint
 * cannot take every slot. SKIP LOCKED lets several dispatchers claim at once without waiting on or
 * double-claiming each other's rows.
 */
export async function claimDue(
  db: Queryable,
  options: { limit: number; leaseMs: number; perWebhook: number; skipWebhooks: string[] },
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<{
    id: string;
    webhook_id: string;
    event_type: string;
    body: string;
    attempts: number;
    created_at: Date | string;
    url: string;
    secret_ciphertext: string;
  }>(
    `with candidates as (
       select d.id, row_number() over (partition by d.webhook_id order by d.next_attempt_at, d.id) as nth
         from (select id, webhook_id, next_attempt_at from webhook_deliveries
                where status = 'pending' and next_attempt_at <= now() and not (webhook_id = any($4::text[]))
                order by next_attempt_at, id
                limit $1 * 4) d
         join webhooks w on w.id = d.webhook_id and w.status = 'enabled'
     ), due as (
       select d.id from webhook_deliveries d join candidates c on c.id = d.id and c.nth <= $3
        where d.status = 'pending' and d.next_attempt_at <= now()
        order by d.next_attempt_at, d.id
        limit $1
        for update of d skip locked
     )
     update webhook_deliveries d
        set attempts = d.attempts + 1, last_attempt_at = now(),
            next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
       from due, webhooks w
      where d.id = due.id and w.id = d.webhook_id
     returning d.id, d.webhook_id, d.event_type, d.body, d.attempts, d.created_at, w.url, w.secret_ciphertext`,
    [options.limit, options.leaseMs, options.perWebhook, options.skipWebhooks],
  );
  return rows.map((r) => ({
    id: r.id,
    webhookId: r.webhook_id,
    eventType: r.event_type,
    body: r.body,
    attempt: r.attempts,
    createdAt: new Date(r.created_at),
    url: r.url,
    secretCiphertext: r.secret_ciphertext,
  }));
}

/** When the next pending delivery falls due (null: none pending). */
export async function nextDueAt(db: Queryable): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | string | null }>(
    `select min(next_attempt_at) as at from webhook_deliveries where status = 'pending'`,
  );
  return rows[0]?.at ? new Date(rows[0].at) : null;
}

/**
 * Records a failed attempt: due again at `nextAttemptAt`, or failed for good. Only the latest
 * claimant may change the status: if the lease ran out and another dispatcher claimed the row
 * meanwhile, this outcome is logged but moot.
 */
export async function settle(
  db: Queryable,
  outcome: { id: string; attempt: number } & ({ status: 'pending'; nextAttemptAt: Date } | { status: 'failed' }),
): Promise<boolean> {
  const next = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
  const { rowCount } = await db.query(
    `update webhook_deliveries set status = $3, next_attempt_at = $4
      where id = $1 and attempts = $2 and status = 'pending'`,
    [outcome.id, outcome.attempt, outcome.status, next],
  );
  return rowCount > 0;
}

/** Records successful attempts (same claimant rule as settle); returns how many took effect. */
export async function settleDeliveredMany(db: Queryable, attempts: Array<{ id: string; attempt: number }>): Promise<number> {
  if (attempts.length === 0) return 0;
  // Locked in id order first (see webhooks.markSucceeded): batches of two dispatchers never deadlock.
  const { rowCount } = await db.query(
    `with locked as (
       select d.id from webhook_deliveries d join unnest($1::text[], $2::int[]) as u(id, attempt) on d.id = u.id
        where d.attempts = u.attempt and d.status = 'pending'
        order by d.id for no key update of d
     )
     update webhook_deliveries d set status = 'delivered', next_attempt_at = null, delivered_at = now()
       from locked where d.id = locked.id`,
    [attempts.map((a) => a.id), attempts.map((a) => a.attempt)],
  );
  return rowCount;
}

export async function cancelPendingOfWebhook(db: Queryable, webhookId: string): Promise<void> {
  await db.query(`update webhook_deliveries set status = 'cancelled' where webhook_id = $1 and status = 'pending'`, [webhookId]);
}

/**
 * Ops that left the chain: cancels their pending deliveries and returns, per webhook, the ops it
 * had already been sent (or tried to be sent), which deserve a reorg notice. The rows are locked
 * first and judged as they are then: a claim (claimDue) that commits while this waits has sent, or
 * is sending, the op, and read from a snapshot taken before that commit it would look unsent — the
 * op would reach the webhook, leave the chain unannounced, and come back under a second id.
 */
export async function retractOps(
  db: Queryable,
  chainId: number,
  userOpHashes: string[],
): Promise<Array<{ webhookId: string; userOpHashes: string[] }>> {
  if (userOpHashes.length === 0) return [];
  const { rows: touched } = await db.query<{
    id: string;
    webhook_id: string;
    user_op_hash: string;
    status: DeliveryStatus;
    attempts: number;
  }>(
    `select id, webhook_id, user_op_hash, status, attempts from webhook_deliveries
      where chain_id = $1 and user_op_hash = any($2::bytea[]) and event_type in ('user_operation', 'account_deployed')
      order by id for update`,
    [chainId, userOpHashes.map((h) => bytea(h))],
  );
  const pending = touched.filter((t) => t.status === 'pending').map((t) => t.id);
  if (pending.length > 0) await db.query(`update webhook_deliveries set status = 'cancelled' where id = any($1::text[])`, [pending]);
  const sent = new Map<string, Set<string>>();
  for (const t of touched) {
    if (t.status !== 'delivered' && (t.status === 'cancelled' || t.attempts === 0)) continue;
    sent.set(t.webhook_id, (sent.get(t.webhook_id) ?? new Set()).add(t.user_op_hash));
  }
  return [...sent.keys()].sort().map((webhookId) => ({ webhookId, userOpHashes: [...sent.get(webhookId)!].sort() }));
}

/** A delivery as the API lists it. */
export type DeliveryRecord = {
  id: string;
  webhookId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
};

type DeliveryRow = {
  id: string;
  webhook_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | string | null;
  last_attempt_at: Date | string | null;
  delivered_at: Date | string | null;
  created_at: Date | string;
};

const COLUMNS = 'id, webhook_id, event_type, status, attempts, next_attempt_at, last_attempt_at, delivered_at, created_at';
const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

const toDelivery = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventType: r.event_type,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.status === 'pending' ? date(r.next_attempt_at) : null,
  lastAttemptAt: date(r.last_attempt_at),
  deliveredAt: date(r.delivered_at),
  createdAt: new Date(r.created_at),
});

/** A page of a webhook's deliveries, newest first (ids are ULIDs: time-ordered). */
export async function listByWebhook(db: Queryable, webhookId: string, page: { limit: number; before?: string }): Promise<DeliveryRecord[]> {
  const { rows } = await db.query<DeliveryRow>(
    `select ${COLUMNS} from webhook_deliveries
      where webhook_id = $1 and ($2::text is null or id < $2)
      order by id desc limit $3`,
    [webhookId, page.before ?? null, page.limit],
  );
  return rows.map(toDelivery);
}

export async function findById(db: Queryable, id: string): Promise<DeliveryRecord | null> {
  const { rows } = await db.query<DeliveryRow>(`select ${COLUMNS} from webhook_deliveries where id = $1`, [id]);
  return rows[0] ? toDelivery(rows[0]) : null;
}

/** The delivery if it belongs to a webhook of this API key. */
export async function findOwned(db: Queryable, apiKeyId: string, id: string): Promise<DeliveryRecord | null> {
  const { rows } = await db.query<DeliveryRow>(
    `select ${COLUMNS.split(', ')
      .map((c) => `d.${c}`)
      .join(', ')}
       from webhook_deliveries d join webhooks w on w.id = d.webhook_id
      where d.id = $1 and w.api_key_id = $2`,
    [id, apiKeyId],
  );
  return rows[0] ? toDelivery(rows[0]) : null;
}

/** Puts a delivery back in the queue, due now, with the same id and bytes (manual replay). */
export async function requeue(db: Queryable, id: string): Promise<DeliveryRecord | null> {
  const { rows } = await db.query<DeliveryRow>(
    `update webhook_deliveries set status = 'pending', next_attempt_at = now() where id = $1 returning ${COLUMNS}`,
    [id],
  );
  return rows[0] ? toDelivery(rows[0]) : null;
}

/** The stored body of a delivery (tests and the API compare bytes). */
export async function findBody(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ body: string }>(`select body from webhook_deliveries where id = $1`, [id]);
  return rows[0]?.body ?? null;
}

/** The API's view of a delivery with its attempt log (attempts of other deliveries are ignored). */
export function toDeliveryModel(d: DeliveryRecord, attempts: AttemptRecord[]): WebhookDelivery {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    createdAt: d.createdAt.toISOString(),
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
    attemptLog: attempts
      .filter((a) => a.deliveryId === d.id)
      .map((a) => ({
        attempt: a.attempt,
        startedAt: a.startedAt.toISOString(),
        durationMs: a.durationMs,
        responseStatus: a.responseStatus,
        error: a.error,
      })),
  };
}

/** NOTIFY channel that tells dispatchers a delivery is due now (replay, test, new matches). */
export const DUE_CHANNEL = 'opscan_webhook_deliveries';

export async function notifyDue(db: Queryable): Promise<void> {
  await db.query(`select pg_notify($1, '')`, [DUE_CHANNEL]);
}

/**
 * Deletes up to `limit` settled deliveries (and their attempts) created before `cutoff`; returns
 * how many. Pending ones are kept whatever their age.
 */
export async function deleteSettledBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `delete from webhook_deliveries where id in (
       select id from webhook_deliveries
        where status <> 'pending' and created_at < $1
        order by created_at limit $2)`,
    [cutoff, limit],
  );
  return rowCount;
}

/** Deliveries per status, and how many pending ones are due now (the dispatcher's queue depth; `opscan status`). */
export async function countByStatus(db: Queryable): Promise<Record<DeliveryStatus, number> & { due: number }> {
  const { rows } = await db.query<{ status: DeliveryStatus; n: string; due: string }>(
    `select status, count(*) as n, count(*) filter (where status = 'pending' and next_attempt_at <= now()) as due
       from webhook_deliveries group by status`,
  );
  const counts = { pending: 0, delivered: 0, failed: 0, cancelled: 0, due: 0 };
  for (const r of rows) {
    counts[r.status] = Number(r.n);
    counts.due += Number(r.due);
  }
  return counts;
}
