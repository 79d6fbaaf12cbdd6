import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { bytea, createDb, type Db, type Queryable } from '../../shared/db/client.js';
import { listMigrations, migrate, type Migration } from '../../shared/db/migrate.js';

/**
 * Each test file gets its own migrated database: on real PostgreSQL when TEST_DATABASE_URL is set
 * (cloned from a template built once per set of migrations), otherwise an in-memory PGlite.
 */

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
/** Test databases are named with their creation time so stale ones can be dropped safely. */
export const TEST_DB_PREFIX = 'opscan_t_';
const TEMPLATE_LOCK_KEY = 4337_0002;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The migrated template for the current migration files, built once (under a lock). */
async function ensureTemplate(admin: pg.Client): Promise<string> {
  const hash = createHash('sha256');
  for (const m of listMigrations()) hash.update(m.name).update(m.checksum);
  const template = `opscan_tpl_${hash.digest('hex').slice(0, 16)}`;
  await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [template]);
    if (exists.rowCount === 0) {
      const building = `${template}_build`;
      await admin.query(`drop database if exists ${building}`);
      await admin.query(`create database ${building}`);
      const db = await createDb({ databaseUrl: withDatabase(TEST_DATABASE_URL!, building), max: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      // Renamed only once complete, so a crash mid-build never leaves a half-migrated template.
      await admin.query(`alter database ${building} rename to ${template}`);
    }
  } finally {
    await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
  }
  return template;
}

export type TestDatabase = { db: Db; url?: string; drop(): Promise<void> };

/**
 * A fresh migrated database (the caller drops it). `migrations`: only these (an older schema, to
 * migrate from); the default is all, cloned from the template on PostgreSQL.
 */
export async function createTestDatabase(options: { migrations?: Migration[] } = {}): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const db = await createDb({});
    await migrate(db, options.migrations);
    return { db, drop: () => db.close() };
  }
  const name = `${TEST_DB_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (admin) => {
    const template = options.migrations ? undefined : await ensureTemplate(admin);
    await admin.query(template ? `create database ${name} template ${template}` : `create database ${name}`);
  });
  const url = withDatabase(TEST_DATABASE_URL, name);
  const db = await createDb({ databaseUrl: url, max: 5 });
  if (options.migrations) await migrate(db, options.migrations);
  return {
    db,
    url,
    async drop() {
      await db.close();
      await withAdmin((admin) => admin.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** Registers before/after hooks giving the current test file its own database. */
export function useTestDb(): { readonly db: Db; readonly url: string | undefined } {
  let current: TestDatabase | undefined;
  before(async () => {
    current = await createTestDatabase();
  });
  after(async () => {
    await current?.drop();
  });
  return {
    get db() {
      if (!current) throw new Error('useTestDb: the database exists only inside tests/hooks');
      return current.db;
    },
    get url() {
      return current?.url;
    },
  };
}

/** Drops test databases left over by killed runs (older than two hours). */
export async function dropStaleTestDatabases(): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  const cutoff = Math.floor(Date.now() / 1000) - 2 * 3600;
  await withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [
      `${TEST_DB_PREFIX}%`,
    ]);
    for (const { datname } of rows) {
      const created = Number(datname.slice(TEST_DB_PREFIX.length).split('_')[0]);
      if (created < cutoff) await admin.query(`drop database if exists ${datname} with (force)`);
    }
  });
}

/**
 * Keeps an op's user_ops row, for a test that deletes it (as a reorg would), and returns what puts
 * it back. The row is kept as JSON text in the database's own forms (bytea as `\x…`, numerics
 * exact), so no value passes through JavaScript.
 */
export async function keepUserOpRow(db: Queryable, userOpHash: string): Promise<{ restore(): Promise<void> }> {
  const { rows } = await db.query<{ row: string }>(`select to_jsonb(u)::text as row from user_ops u where user_op_hash = $1`, [
    bytea(userOpHash),
  ]);
  const row = rows[0]!.row;
  return {
    async restore() {
      await db.query(`insert into user_ops select * from jsonb_populate_record(null::user_ops, $1::jsonb)`, [row]);
    },
  };
}
