import type { Queryable } from '../client.js';

export type ApiKey = {
  id: string;
  prefix: string;
  name: string;
  rateLimitPerSecond: number | null;
  createdAt: Date;
  revokedAt: Date | null;
};

type ApiKeyRow = {
  id: string;
  prefix: string;
  name: string;
  rate_limit_per_second: number | null;
  created_at: Date;
  revoked_at: Date | null;
};

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  rateLimitPerSecond: r.rate_limit_per_second,
  createdAt: new Date(r.created_at),
  revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
});

const COLUMNS = 'id, prefix, name, rate_limit_per_second, created_at, revoked_at';

export async function insert(
  db: Queryable,
  key: { prefix: string; hash: string; name: string; rateLimitPerSecond?: number | null },
): Promise<ApiKey> {
  const { rows } = await db.query<ApiKeyRow>(
    `insert into api_keys (prefix, key_hash, name, rate_limit_per_second)
     values ($1, $2, $3, $4) returning ${COLUMNS}`,
    [key.prefix, key.hash, key.name, key.rateLimitPerSecond ?? null],
  );
  return toApiKey(rows[0]!);
}

/** The key with this hash, revoked or not (the caller tells 403 "revoked" from "unknown"). */
export async function findByHash(db: Queryable, hash: string): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(`select ${COLUMNS} from api_keys where key_hash = $1`, [hash]);
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
    `update api_keys set revoked_at = now() where prefix = $1 and revoked_at is null returning ${COLUMNS}`,
    [prefix],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}
