import type { WebhookFilter } from '../../models/webhook.js';
import type { Queryable } from '../client.js';

/** A webhook subscription as stored; `secretCiphertext` never leaves the server or the dispatcher. */
export type WebhookRecord = {
  id: string;
  apiKeyId: string;
  apiName: string;
  url: string;
  filter: WebhookFilter;
  identifier: string;
  /** `identifier` in lower case: what events are matched on. */
  address: string;
  chainId: number;
  secretCiphertext: string;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  createdAt: Date;
};

type WebhookRow = {
  id: string;
  api_key_id: string;
  api_name: string;
  url: string;
  filter: WebhookFilter;
  identifier: string;
  address: string;
  chain_id: string;
  secret_ciphertext: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  created_at: Date | string;
};

const COLUMNS = `id, api_key_id, api_name, url, filter, identifier, address, chain_id, secret_ciphertext,
  status, disabled_reason, created_at`;

const toWebhook = (r: WebhookRow): WebhookRecord => ({
  id: r.id,
  apiKeyId: String(r.api_key_id),
  apiName: r.api_name,
  url: r.url,
  filter: r.filter,
  identifier: r.identifier,
  address: r.address,
  chainId: Number(r.chain_id),
  secretCiphertext: r.secret_ciphertext,
  status: r.status,
  disabledReason: r.disabled_reason,
  createdAt: new Date(r.created_at),
});

export type NewWebhook = Omit<WebhookRecord, 'status' | 'disabledReason' | 'createdAt'>;

export async function insert(db: Queryable, w: NewWebhook): Promise<WebhookRecord> {
  const { rows } = await db.query<WebhookRow>(
    `insert into webhooks (id, api_key_id, api_name, url, filter, identifier, address, chain_id, secret_ciphertext)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${COLUMNS}`,
    [w.id, w.apiKeyId, w.apiName, w.url, w.filter, w.identifier, w.address, w.chainId, w.secretCiphertext],
  );
  return toWebhook(rows[0]!);
}

/**
 * Serialises webhook creation per API key (inside the caller's transaction), so the per-key limit
 * and the duplicate check cannot be raced by concurrent requests.
 */
export async function lockKey(tx: Queryable, apiKeyId: string): Promise<void> {
  await tx.query(`select id from api_keys where id = $1 for update`, [apiKeyId]);
}

export async function countByKey(db: Queryable, apiKeyId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`select count(*) as n from webhooks where api_key_id = $1`, [apiKeyId]);
  return Number(rows[0]?.n ?? 0);
}

/** The id of the key's webhook with the same URL, filter, address and chain, if any. */
export async function findIdentical(
  db: Queryable,
  w: Pick<NewWebhook, 'apiKeyId' | 'url' | 'filter' | 'address' | 'chainId'>,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `select id from webhooks where api_key_id = $1 and url = $2 and filter = $3 and address = $4 and chain_id = $5`,
    [w.apiKeyId, w.url, w.filter, w.address, w.chainId],
  );
  return rows[0]?.id ?? null;
}

export async function listByKey(db: Queryable, apiKeyId: string): Promise<WebhookRecord[]> {
  const { rows } = await db.query<WebhookRow>(`select ${COLUMNS} from webhooks where api_key_id = $1 order by created_at, id`, [apiKeyId]);
  return rows.map(toWebhook);
}

/** The webhook if this key owns it; another key's webhook is indistinguishable from none. */
export async function findOwned(db: Queryable, apiKeyId: string, id: string): Promise<WebhookRecord | null> {
  const { rows } = await db.query<WebhookRow>(`select ${COLUMNS} from webhooks where id = $1 and api_key_id = $2`, [id, apiKeyId]);
  return rows[0] ? toWebhook(rows[0]) : null;
}

export async function findById(db: Queryable, id: string): Promise<WebhookRecord | null> {
  const { rows } = await db.query<WebhookRow>(`select ${COLUMNS} from webhooks where id = $1`, [id]);
  return rows[0] ? toWebhook(rows[0]) : null;
}

/** Deletes the key's webhook (its deliveries and attempts go with it); false when it owns none. */
export async function deleteOwned(db: Queryable, apiKeyId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`delete from webhooks where id = $1 and api_key_id = $2`, [id, apiKeyId]);
  return rowCount > 0;
}

export type WebhookMatch = { webhookId: string; filter: WebhookFilter; address: string; createdAt: Date };

/**
 * Enabled webhooks of a chain whose (filter, address) is one of `keys` (through webhooks_match).
 * The caller dedupes per event: several keys may hit one webhook.
 */
export async function listMatches(
  db: Queryable,
  chainId: number,
  keys: ReadonlyArray<{ filter: WebhookFilter; address: string }>,
): Promise<WebhookMatch[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ id: string; filter: WebhookFilter; address: string; created_at: Date | string }>(
    `select w.id, w.filter, w.address, w.created_at
       from (select distinct f, a from unnest($2::text[], $3::text[]) as k(f, a)) k
       join webhooks w on w.chain_id = $1 and w.filter = k.f and w.address = k.a and w.status = 'enabled'`,
    [chainId, keys.map((k) => k.filter), keys.map((k) => k.address)],
  );
  return rows.map((r) => ({ webhookId: r.id, filter: r.filter, address: r.address, createdAt: new Date(r.created_at) }));
}

/** Webhooks (enabled) among `ids`, with what the matcher needs to address them. */
export async function listEnabledByIds(db: Queryable, ids: string[]): Promise<WebhookRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<WebhookRow>(`select ${COLUMNS} from webhooks where id = any($1::text[]) and status = 'enabled'`, [ids]);
  return rows.map(toWebhook);
}

/**
 * After 2xx answers: these endpoints are healthy again. Rows that would barely change are not
 * rewritten (a busy webhook would otherwise be updated on every delivery).
 */
export async function markSucceeded(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  // Rows are locked in id order (an UPDATE locks in scan order): concurrent batches of several
  // dispatchers then wait for each other instead of deadlocking.
  await db.query(
    `with locked as (
       select id from webhooks
        where id = any($1::text[])
          and (failing_since is not null or last_success_at is null or last_success_at < now() - interval '10 seconds')
        order by id for no key update
     )
     update webhooks w set failing_since = null, last_success_at = now() from locked where w.id = locked.id`,
    [[...new Set(ids)].sort()],
  );
}

/** After a failed attempt: starts the failure clock if it is not running; returns when it started. */
export async function markFailing(db: Queryable, id: string): Promise<Date | null> {
  const { rows } = await db.query<{ failing_since: Date | string }>(
    `update webhooks set failing_since = coalesce(failing_since, now()) where id = $1 returning failing_since`,
    [id],
  );
  return rows[0] ? new Date(rows[0].failing_since) : null;
}

/** Stops deliveries to a webhook (the caller cancels what it still had pending). */
export async function disable(db: Queryable, id: string, reason: 'gone' | 'failing'): Promise<void> {
  await db.query(`update webhooks set status = 'disabled', disabled_reason = $2 where id = $1`, [id, reason]);
}

/** The spec's Webhook resource (no secret), plus whether it is still delivering. */
export function toWebhookModel(w: WebhookRecord) {
  return {
    apiName: w.apiName,
    webhookUrl: w.url,
    filter: w.filter,
    chainId: String(w.chainId),
    identifier: w.identifier,
    id: w.id,
    createdAt: w.createdAt.toISOString(),
    status: w.status,
    disabledReason: w.disabledReason,
  };
}

// Operator actions (`opscan webhooks`): across every key.

export async function listAll(db: Queryable): Promise<WebhookRecord[]> {
  const { rows } = await db.query<WebhookRow>(`select ${COLUMNS} from webhooks order by created_at, id`);
  return rows.map(toWebhook);
}

/** An operator turns a webhook off (reason `operator`) or back on (its failure clock restarts). */
export async function setEnabledByOperator(db: Queryable, id: string, enabled: boolean): Promise<WebhookRecord | null> {
  const { rows } = await db.query<WebhookRow>(
    enabled
      ? `update webhooks set status = 'enabled', disabled_reason = null, failing_since = null where id = $1 returning ${COLUMNS}`
      : `update webhooks set status = 'disabled', disabled_reason = 'operator' where id = $1 returning ${COLUMNS}`,
    [id],
  );
  return rows[0] ? toWebhook(rows[0]) : null;
}
