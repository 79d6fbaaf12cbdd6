import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './client.js';

/**
 * Forward-only SQL migrations: numbered files in ./migrations, each applied once, in order, in its
 * own transaction, under an advisory lock so that concurrent migrators (two release phases, two
 * test workers) wait for each other instead of colliding. An applied file must never change: its
 * checksum is recorded and checked.
 */

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Arbitrary constant: the advisory-lock key that serialises migrators. */
const MIGRATION_LOCK_KEY = 4337_0001;

export type Migration = { name: string; sql: string; checksum: string };

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

async function appliedMigrations(db: Queryable): Promise<Map<string, string>> {
  const { rows } = await db.query<{ name: string; checksum: string }>(`select name, checksum from schema_migrations order by name`);
  return new Map(rows.map((r) => [r.name, r.checksum]));
}

function checkUnchanged(migrations: Migration[], applied: Map<string, string>): void {
  for (const m of migrations) {
    const recorded = applied.get(m.name);
    if (recorded && recorded !== m.checksum) {
      throw new Error(
        `Migration ${m.name} was changed after it was applied. Migrations are forward-only: ` +
          `restore the file and add a new numbered migration instead.`,
      );
    }
  }
}

/**
 * Applies every pending migration; returns the names it applied. Idempotent. Each migration runs
 * in its own transaction that first takes a transaction-scoped advisory lock and re-reads what is
 * applied, so concurrent migrators wait for each other and never apply a file twice.
 */
export async function migrate(db: Db, migrations = listMigrations()): Promise<string[]> {
  const lock = (tx: Queryable) => tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
  const applied = await db.transaction(async (tx) => {
    await lock(tx);
    await tx.query(`create table if not exists schema_migrations (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    return appliedMigrations(tx);
  });
  checkUnchanged(migrations, applied);
  const done: string[] = [];
  for (const m of migrations.filter((m) => !applied.has(m.name))) {
    const ran = await db
      .transaction(async (tx) => {
        await lock(tx);
        if ((await appliedMigrations(tx)).has(m.name)) return false;
        await tx.query(`insert into schema_migrations (name, checksum) values ($1, $2)`, [m.name, m.checksum]);
        await tx.query(m.sql);
        return true;
      })
      .catch((error: Error) => {
        throw new Error(`Migration ${m.name} failed: ${error.message}`, { cause: error });
      });
    if (ran) done.push(m.name);
  }
  return done;
}

/**
 * Processes other than `release` refuse to start on a database that is behind the code: they
 * would read or write tables that do not exist yet.
 */
export async function assertMigrated(db: Queryable, migrations = listMigrations()): Promise<void> {
  const { rows } = await db.query<{ exists: boolean }>(`select to_regclass('schema_migrations') is not null as exists`);
  const applied = rows[0]?.exists ? await appliedMigrations(db) : new Map<string, string>();
  const pending = migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
  if (pending.length > 0) {
    throw new Error(
      `The database is not migrated (pending: ${pending.join(', ')}). Run \`npm run migrate\` ` + `(the Procfile's release step) first.`,
    );
  }
  checkUnchanged(migrations, applied);
}
