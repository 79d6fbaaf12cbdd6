/**
 * A database written by a previous release, kept as a test fixture: its chain tables' rows (as
 * JSON, one array per table) and the answers that release gave over them (status and body of a
 * fixed list of requests). previousRelease.test.ts restores the rows into a database migrated only
 * as far as that release, runs the current migrations and asks again: every answer must be the same.
 *
 * Recorded by recordPreviousRelease.ts, on the code of the release it names.
 */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import request from 'supertest';
import type { Queryable } from '../../shared/db/client.js';

export type Request = { method: 'GET' | 'POST'; path: string; query?: Record<string, string>; body?: unknown };
export type Recorded = Request & { status: number; answer: unknown };

export type PreviousRelease = {
  /** The commit whose code wrote the rows and gave the answers. */
  commit: string;
  /** The last migration that release had. */
  lastMigration: string;
  /**
   * Rows of every table that had any, as the JSON text `json_agg` wrote (kept as text: parsed, the
   * uint256 numbers would lose digits).
   */
  tables: Record<string, string>;
  answers: Recorded[];
};

export const FIXTURE = new URL('./previousRelease.json.br', import.meta.url);

export function readPreviousRelease(): PreviousRelease {
  return JSON.parse(brotliDecompressSync(readFileSync(FIXTURE)).toString('utf8')) as PreviousRelease;
}

/** Tables whose rows the fixture keeps: every table of the schema but the migrations' own record and API keys (a test makes its own). */
export async function tablesToKeep(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
       and c.relname not in ('schema_migrations', 'api_keys', 'api_key_usage')
     order by c.relname`,
  );
  return rows.map((r) => r.name);
}

/** Each kept table's rows, in a stable order (by the row's text). */
export async function dumpTables(db: Queryable): Promise<Record<string, string>> {
  const tables: Record<string, string> = {};
  for (const name of await tablesToKeep(db)) {
    const { rows } = await db.query<{ rows: string | null }>(`select json_agg(t order by t::text)::text as rows from ${name} t`);
    if (rows[0]?.rows) tables[name] = rows[0].rows;
  }
  return tables;
}

/**
 * Writes the rows back into a database at the release's schema: each network gets its own
 * partitions first (as the indexer gives them when it starts a network), and serial columns'
 * sequences continue after the restored ids.
 */
export async function restoreTables(db: Queryable, tables: Record<string, string>): Promise<void> {
  for (const state of JSON.parse(tables.indexer_state ?? '[]') as Array<{ chain_id: number }>) {
    await db.query('select opscan_ensure_chain_partitions($1)', [state.chain_id]);
  }
  for (const [name, rows] of Object.entries(tables)) {
    await db.query(`insert into ${name} select * from json_populate_recordset(null::${name}, $1::json)`, [rows]);
    const { rows: serials } = await db.query<{ sequence: string | null }>(
      `select pg_get_serial_sequence(table_name, column_name) as sequence from information_schema.columns
       where table_schema = 'public' and table_name = $1 and column_name = 'id'`,
      [name],
    );
    if (serials[0]?.sequence) await db.query(`select setval($1, (select max(id) from ${name}))`, [serials[0].sequence]);
  }
}

/**
 * Fields a later release may add to answers without changing the ones there were: `implementation`
 * (an account's implementation), `writeFailure` (a network's held batch), what bundles earned
 * (`revenue`, `fee`, `profit`, `bundlerProfitDaily`). Removed from both sides before comparing.
 */
const ADDED_FIELDS = new Set([
  'implementation',
  'writeFailure',
  'revenue',
  'fee',
  'profit',
  'bundlerProfitDaily',
  // why a failed op failed (getUserOp, getUserOpMetadata, the status summary)
  'failure',
  // an account's ERC-7579 modules (accountDetail.modules)
  'modules',
  // an address's EIP-7702 delegate (accountDetail)
  'delegation',
]);

export function withoutAddedFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAddedFields);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !ADDED_FIELDS.has(k))
        .map(([k, v]) => [k, withoutAddedFields(v)]),
    );
  }
  return value;
}

/** One question's status and body (JSON, or the text when not JSON). */
export async function ask(app: Parameters<typeof request>[0], key: string, r: Request): Promise<{ status: number; answer: unknown }> {
  const res =
    r.method === 'GET'
      ? await request(app)
          .get(r.path)
          .query(r.query ?? {})
          .set('x-api-key', key)
      : await request(app)
          .post(r.path)
          .set('x-api-key', key)
          .send(r.body as object);
  return { status: res.status, answer: res.type.includes('json') ? res.body : res.text };
}
