/**
 * A database written by the previous release (the fixture's rows, at its schema) migrates to the
 * current schema and then answers every recorded question byte for byte as that release did.
 */
import { expect } from 'chai';
import { createApp } from '../../server/app.js';
import { listMigrations, migrate } from '../../shared/db/migrate.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ask, readPreviousRelease, restoreTables, withoutAddedFields, type PreviousRelease } from './previousRelease.js';

describe('a database of the previous release, migrated in place', function () {
  this.timeout(600_000);
  let fixture: PreviousRelease;
  let t: TestDatabase;
  let app: ReturnType<typeof createApp>;
  let key: string;
  let close = async () => {};

  before(async () => {
    fixture = readPreviousRelease();
    const all = listMigrations();
    t = await createTestDatabase({ migrations: all.filter((m) => m.name <= fixture.lastMigration) });
    await restoreTables(t.db, fixture.tables);
    await migrate(t.db, all);
    key = await createTestKey(t.db, 'previous-release', 1_000_000);
    const deps = testDeps(t.db, { RATE_LIMIT_PER_SECOND: '1000000' });
    close = () => deps.services.close();
    app = createApp(deps);
  });
  after(async () => {
    await close();
    await t?.drop();
  });

  it('holds the rows of every op shape and answers of every kind', () => {
    const rows = (table: string) => (JSON.parse(fixture.tables[table] ?? '[]') as unknown[]).length;
    expect(rows('user_ops')).to.be.greaterThan(100);
    for (const table of ['logs', 'bundle_transactions', 'token_transfers', 'address_transactions', 'user_op_calls', 'outbox_events']) {
      expect(rows(table), table).to.be.greaterThan(0);
    }
    for (const base of ['/v0/', '/jiffyscan/v0/', '/subgraphs/']) {
      expect(fixture.answers.filter((a) => a.path.startsWith(base) && a.status === 200).length, base).to.be.greaterThan(10);
    }
  });

  it('keeps lz4 on the rewritten columns (ALTER … TYPE resets it; PostgreSQL builds with lz4 only)', async function () {
    if (t.db.kind === 'pglite') this.skip();
    const { rows } = await t.db.query<{ tab: string; name: string; compression: string }>(
      `select a.attrelid::regclass::text as tab, a.attname as name, a.attcompression as compression
       from pg_attribute a join pg_class c on c.oid = a.attrelid
       where (c.relname in ('token_transfers', 'bundle_transactions', 'user_ops', 'bundles', 'user_op_traces', 'accounts', 'entity_stats',
                            'outbox_events')
              or c.oid in (select inhrelid from pg_inherits
                           where inhparent::regclass::text in ('token_transfers', 'user_ops', 'user_op_traces', 'outbox_events')))
         and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')`,
    );
    expect(rows.length, 'columns of the tables and their partitions').to.be.greaterThan(10);
    expect(rows.filter((r) => r.compression !== 'l').map((r) => `${r.tab}.${r.name}`)).to.deep.equal([]);
    const { rows: stored } = await t.db.query<{ compression: string | null }>(
      `select pg_column_compression(input) as compression from bundle_transactions order by length(input) desc limit 1`,
    );
    expect(stored[0]?.compression, 'a rewritten value').to.equal('lz4');
  });

  it('answers every recorded question as the previous release did', async () => {
    const differing: string[] = [];
    for (const recorded of fixture.answers) {
      const { status, answer } = await ask(app, key, recorded);
      const same =
        status === recorded.status && JSON.stringify(withoutAddedFields(answer)) === JSON.stringify(withoutAddedFields(recorded.answer));
      if (!same) {
        differing.push(
          `${recorded.method} ${recorded.path} ${JSON.stringify(recorded.query ?? recorded.body)}: ` +
            `${recorded.status} ${JSON.stringify(recorded.answer).slice(0, 300)} → ${status} ${JSON.stringify(answer).slice(0, 300)}`,
        );
      }
    }
    expect(differing.slice(0, 10), `${differing.length} of ${fixture.answers.length} answers differ`).to.deep.equal([]);
  });
});
