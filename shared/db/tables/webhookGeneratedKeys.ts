import type { Queryable } from '../client.js';

/** The generated secret-encryption key, or null when none was ever generated. */
export async function find(db: Queryable): Promise<string | null> {
  const { rows } = await db.query<{ key: string }>(`select key from webhook_generated_keys where id = 1`);
  return rows[0]?.key ?? null;
}

/**
 * Stores `candidate` unless a key exists already, and returns the stored key: processes starting
 * together all end up with the first one written.
 */
export async function findOrInsert(db: Queryable, candidate: string): Promise<string> {
  await db.query(`insert into webhook_generated_keys (id, key) values (1, $1) on conflict (id) do nothing`, [candidate]);
  const stored = await find(db);
  if (!stored) throw new Error('webhook_generated_keys: the key vanished right after being written');
  return stored;
}
