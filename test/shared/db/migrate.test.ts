import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, withTransaction, type Db } from '../../../shared/db/client.js';
import { assertMigrated, listMigrations, migrate, type Migration } from '../../../shared/db/migrate.js';
import { TEST_DATABASE_URL, createTestDatabase } from '../../helpers/db.js';

/** Runs the same migrator checks on PGlite and, when configured, on real PostgreSQL. */
const stores: Array<{ name: string; open: () => Promise<{ db: Db; drop: () => Promise<void> }> }> = [
  {
    name: 'PGlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'opscan-pglite-'));
      const db = await createDb({ dataDir: dir });
      return {
        db,
        drop: async () => {
          await db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
if (TEST_DATABASE_URL) {
  stores.push({
    name: 'PostgreSQL',
    async open() {
      // An empty database: createTestDatabase clones a migrated template, so start from its
      // drop-and-recreate of the schema instead.
      const t = await createTestDatabase();
      await t.db.query('drop schema public cascade; create schema public;');
      return { db: t.db, drop: t.drop };
    },
  });
}

for (const store of stores) {
  describe(`migrations on ${store.name}`, () => {
    let db: Db;
    let drop: () => Promise<void>;
    beforeEach(async () => {
      ({ db, drop } = await store.open());
    });
    afterEach(async () => {
      await drop();
    });

    it('refuses an unmigrated database with a clear message', async () => {
      let message = '';
      await assertMigrated(db).catch((e: Error) => (message = e.message));
      expect(message).to.include('npm run migrate');
    });

    it('applies every migration once, then nothing', async () => {
      const first = await migrate(db);
      expect(first).to.deep.equal(listMigrations().map((m) => m.name));
      expect(await migrate(db)).to.deep.equal([]);
      await assertMigrated(db);
      const { rows } = await db.query<{ n: string }>('select count(*)::text as n from schema_migrations');
      expect(rows[0]!.n).to.equal(String(first.length));
    });

    it('creates the tables the processes share', async () => {
      await migrate(db);
      for (const table of ['api_keys', 'user_ops', 'bundles', 'accounts', 'daily_stats', 'outbox_events', 'indexer_state']) {
        const { rows } = await db.query<{ t: string | null }>(`select to_regclass($1)::text as t`, [table]);
        expect(rows[0]!.t, table).to.equal(table);
      }
    });

    it('keeps uint256 values exact', async () => {
      await migrate(db);
      const big = (2n ** 256n - 1n).toString();
      const { rows } = await db.query<{ v: string }>('select $1::numeric(78,0) as v', [big]);
      expect(rows[0]!.v).to.equal(big);
    });

    it('rejects a changed migration and rolls back a failing one', async () => {
      await migrate(db);
      const changed: Migration[] = listMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'x' } : m));
      let message = '';
      await migrate(db, changed).catch((e: Error) => (message = e.message));
      expect(message).to.include('was changed after it was applied');

      const failing: Migration = { name: '9999_broken.sql', sql: 'create table half_done (id int); select 1/0;', checksum: 'y' };
      await migrate(db, [...listMigrations(), failing]).catch(() => {});
      const { rows } = await db.query<{ t: string | null }>(`select to_regclass('half_done')::text as t`);
      expect(rows[0]!.t).to.equal(null);
      const applied = await db.query(`select 1 from schema_migrations where name = '9999_broken.sql'`);
      expect(applied.rowCount).to.equal(0);
    });

    it('serialises concurrent migrators', async () => {
      const results = await Promise.all([migrate(db), migrate(db), migrate(db)]);
      expect(results.flat().sort()).to.deep.equal(
        listMigrations()
          .map((m) => m.name)
          .sort(),
      );
    });

    it("the daily lists' migration stores the active wallets of the days a deployment had already moved past, not the latest day's", async () => {
      await migrate(
        db,
        listMigrations().filter((m) => m.name < '0016'),
      );
      const [a, b, c] = ['0x' + 'a'.repeat(40), '0x' + 'b'.repeat(40), '0x' + 'c'.repeat(40)];
      await db.query(`insert into daily_stats (chain_id, day, user_ops, bundles, active_wallets)
        values (1, 100, 3, 1, 2), (1, 101, 0, 1, 0), (1, 102, 1, 1, 1), (2, 100, 1, 1, 1)`);
      await db.query(`insert into daily_active_wallets (chain_id, day, address)
        values (1, 100, '${b}'), (1, 100, '${a}'), (1, 102, '${c}'), (2, 100, '${a}')`);
      expect(await migrate(db)).to.deep.equal(
        listMigrations()
          .filter((m) => m.name >= '0016')
          .map((m) => m.name),
      );
      const { rows } = await db.query<{ chain_id: string; day: number; active_wallet_list: string | null }>(
        'select chain_id::text, day, active_wallet_list from daily_stats order by chain_id, day',
      );
      expect(rows).to.deep.equal([
        { chain_id: '1', day: 100, active_wallet_list: `${a}${b.slice(2)}` },
        { chain_id: '1', day: 101, active_wallet_list: '0x' },
        { chain_id: '1', day: 102, active_wallet_list: null },
        { chain_id: '2', day: 100, active_wallet_list: null },
      ]);
    });

    it('rolls back a failed transaction', async () => {
      await migrate(db);
      await withTransaction(db, async (tx) => {
        await tx.query(`insert into api_keys (prefix, key_hash, name) values ('p1', 'h1', 'kept')`);
      });
      await withTransaction(db, async (tx) => {
        await tx.query(`insert into api_keys (prefix, key_hash, name) values ('p2', 'h2', 'lost')`);
        throw new Error('boom');
      }).catch(() => {});
      const { rows } = await db.query<{ name: string }>('select name from api_keys order by id');
      expect(rows.map((r) => r.name)).to.deep.equal(['kept']);
    });
  });
}
