import type { Queryable } from './client.js';

/**
 * `update <table> set <the changed columns>, updated_at = now() where id = $1 returning <returning>`:
 * only the fields present in `changes` are set (undefined keeps a column, null clears it), each
 * named through `columns` (field → column), so a caller's field can never inject SQL. Returns the
 * updated row, or null when there is no row with this id.
 */
export async function updateById<TChanges extends object, TRow>(
  db: Queryable,
  { table, columns, returning }: { table: string; columns: Record<keyof TChanges, string>; returning: string },
  id: string,
  changes: Partial<TChanges>,
): Promise<TRow | null> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined) as Array<[keyof TChanges, unknown]>;
  const sets = entries.map(([field], i) => `${columns[field]} = $${i + 2}`);
  const { rows } = await db.query<TRow & Record<string, unknown>>(
    `update ${table} set ${[...sets, 'updated_at = now()'].join(', ')} where id = $1 returning ${returning}`,
    [id, ...entries.map(([, v]) => v)],
  );
  return rows[0] ?? null;
}
