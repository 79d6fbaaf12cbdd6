import type { Queryable } from '../client.js';
import { updateById } from '../updateById.js';

/** What a key may do: read the data API, manage its webhooks, call operator endpoints, call the ERC-4337 RPC. */
export const API_KEY_SCOPES = ['read', 'webhooks', 'admin', 'rpc'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export type ApiKey = {
  id: string;
  prefix: string;
  name: string;
  /** Without a plan: the key's own rate (null: the deployment's default). A plan's rate wins. */
  rateLimitPerSecond: number | null;
  planId: string | null;
  scopes: ApiKeyScope[];
  /** Network names the key may read (null: all). */
  networks: string[] | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The key that replaced this one by rotation. */
  replacedBy: string | null;
  /** The key whose quota counts this one shares: the first of its rotation chain (itself when it was not issued by a rotation). */
  quotaHolderId: string;
};

type ApiKeyRow = {
  id: string;
  prefix: string;
  name: string;
  rate_limit_per_second: number | null;
  plan_id: string | null;
  scopes: ApiKeyScope[];
  networks: string[] | null;
  created_at: Date;
  updated_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  replaced_by: string | null;
  quota_holder_id: string;
};

const dateOrNull = (d: Date | null) => (d ? new Date(d) : null);

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: String(r.id),
  prefix: r.prefix,
  name: r.name,
  rateLimitPerSecond: r.rate_limit_per_second,
  planId: r.plan_id === null ? null : String(r.plan_id),
  scopes: r.scopes,
  networks: r.networks,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  expiresAt: dateOrNull(r.expires_at),
  revokedAt: dateOrNull(r.revoked_at),
  lastUsedAt: dateOrNull(r.last_used_at),
  replacedBy: r.replaced_by === null ? null : String(r.replaced_by),
  quotaHolderId: String(r.quota_holder_id),
});

const COLUMNS =
  'id, prefix, name, rate_limit_per_second, plan_id, scopes, networks, created_at, updated_at, expires_at, revoked_at, last_used_at, replaced_by, ' +
  'coalesce(quota_holder_id, id) as quota_holder_id';

/** Whether the key may be used at `now`: not revoked, not past its expiry. */
export function isActive(key: ApiKey, now = new Date()): boolean {
  return !key.revokedAt && !(key.expiresAt && key.expiresAt <= now);
}

export async function insert(
  db: Queryable,
  key: {
    prefix: string;
    hash: string;
    name: string;
    rateLimitPerSecond?: number | null;
    planId?: string | null;
    scopes?: ApiKeyScope[];
    networks?: string[] | null;
    expiresAt?: Date | null;
    /** A rotation's new key: the old key's quota holder. */
    quotaHolderId?: string | null;
  },
): Promise<ApiKey> {
  const { rows } = await db.query<ApiKeyRow>(
    `insert into api_keys (prefix, key_hash, name, rate_limit_per_second, plan_id, scopes, networks, expires_at, quota_holder_id)
     values ($1, $2, $3, $4, $5, coalesce($6::text[], '{read,webhooks,rpc}'), $7, $8, $9) returning ${COLUMNS}`,
    [
      key.prefix,
      key.hash,
      key.name,
      key.rateLimitPerSecond ?? null,
      key.planId ?? null,
      key.scopes ?? null,
      key.networks ?? null,
      key.expiresAt ?? null,
      key.quotaHolderId ?? null,
    ],
  );
  return toApiKey(rows[0]!);
}

/** The key with this hash, active or not (the caller tells 403 "revoked" from "unknown"). */
export async function findByHash(db: Queryable, hash: string): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(`select ${COLUMNS} from api_keys where key_hash = $1`, [hash]);
  return rows[0] ? toApiKey(rows[0]) : null;
}

export async function findById(db: Queryable, id: string): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(`select ${COLUMNS} from api_keys where id = $1`, [id]);
  return rows[0] ? toApiKey(rows[0]) : null;
}

export async function findByPrefix(db: Queryable, prefix: string): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(`select ${COLUMNS} from api_keys where prefix = $1`, [prefix]);
  return rows[0] ? toApiKey(rows[0]) : null;
}

/** A stored key with this hash or this prefix (both are unique), or null. */
export async function findClash(db: Queryable, key: { prefix: string; hash: string }): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(`select ${COLUMNS} from api_keys where key_hash = $1 or prefix = $2 limit 1`, [
    key.hash,
    key.prefix,
  ]);
  return rows[0] ? toApiKey(rows[0]) : null;
}

export async function list(db: Queryable): Promise<ApiKey[]> {
  const { rows } = await db.query<ApiKeyRow>(`select ${COLUMNS} from api_keys order by id`);
  return rows.map(toApiKey);
}

/** Revokes the active key with this prefix; returns it, or null when there is none. */
export async function revokeByPrefix(db: Queryable, prefix: string): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(
    `update api_keys set revoked_at = now(), updated_at = now() where prefix = $1 and revoked_at is null returning ${COLUMNS}`,
    [prefix],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}

/** What an operator may change on a key; an absent field is left as it is, null clears it. */
export type ApiKeyChanges = Partial<{
  name: string;
  rateLimitPerSecond: number | null;
  planId: string | null;
  scopes: ApiKeyScope[];
  networks: string[] | null;
  expiresAt: Date | null;
  replacedBy: string | null;
}>;

const CHANGEABLE: Record<keyof ApiKeyChanges, string> = {
  name: 'name',
  rateLimitPerSecond: 'rate_limit_per_second',
  planId: 'plan_id',
  scopes: 'scopes',
  networks: 'networks',
  expiresAt: 'expires_at',
  replacedBy: 'replaced_by',
};

/** Applies `changes` to the key; returns it as stored, or null when there is no such key. */
export async function update(db: Queryable, id: string, changes: ApiKeyChanges): Promise<ApiKey | null> {
  const row = await updateById<ApiKeyChanges, ApiKeyRow>(db, { table: 'api_keys', columns: CHANGEABLE, returning: COLUMNS }, id, changes);
  return row ? toApiKey(row) : null;
}

/** Revokes the key with this id (a revoked key stays revoked at its first time); null when there is none. */
export async function revokeById(db: Queryable, id: string): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(
    `update api_keys set revoked_at = coalesce(revoked_at, now()), updated_at = now() where id = $1 returning ${COLUMNS}`,
    [id],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}

/** How many keys each plan has (plans without keys are absent). */
export async function countsByPlan(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query<{ plan_id: string; n: string }>(
    `select plan_id, count(*) as n from api_keys where plan_id is not null group by plan_id`,
  );
  return new Map(rows.map((r) => [String(r.plan_id), Number(r.n)]));
}

/** How many keys on the plan can still be used (as `isActive`: not revoked, not past their expiry). */
export async function countActiveOnPlan(db: Queryable, planId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `select count(*) as n from api_keys where plan_id = $1 and revoked_at is null and (expires_at is null or expires_at > now())`,
    [planId],
  );
  return Number(rows[0]!.n);
}

/**
 * Takes the plan off its revoked and expired keys (they keep their usage history), so that the plan
 * can be deleted: nobody uses it any more, but they still reference it.
 */
export async function detachInactiveFromPlan(db: Queryable, planId: string): Promise<void> {
  await db.query(
    `update api_keys set plan_id = null, updated_at = now()
     where plan_id = $1 and (revoked_at is not null or expires_at <= now())`,
    [planId],
  );
}

/**
 * NOTIFY channel on which a change to a key or a plan (update, rotation, revocation) is announced,
 * so that every web process drops what it remembers of the key at once. Payload: the key's id, or
 * '' when a plan changed (every key on it may be affected).
 */
export const API_KEYS_CHANNEL = 'opscan_api_keys';

export async function announceChange(db: Queryable, keyId: string | null): Promise<void> {
  await db.query(`select pg_notify($1, $2)`, [API_KEYS_CHANNEL, keyId ?? '']);
}

/** Records when keys were last used (the usage meter's flush: one row per key, once per flush). */
export async function touchLastUsed(db: Queryable, uses: Array<{ id: string; at: Date }>): Promise<void> {
  if (uses.length === 0) return;
  await db.query(
    `update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
     from unnest($1::bigint[], $2::timestamptz[]) as u(id, at) where k.id = u.id`,
    [uses.map((u) => u.id), uses.map((u) => u.at.toISOString())],
  );
}
