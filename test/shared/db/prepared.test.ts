import { expect } from 'chai';
import { createDb, prepared } from '../../../shared/db/client.js';
import { useTestDb } from '../../helpers/db.js';

describe('db: prepared statements', () => {
  const t = useTestDb();

  it('runs a prepared text as a statement the connection keeps, and drops a connection whose plan went stale', async function () {
    if (!t.url) this.skip(); // PGlite plans every statement itself
    // One connection, so the second call meets the statement the first one left.
    const db = await createDb({ databaseUrl: t.url, max: 1 });
    try {
      await db.query('create table prepared_probe (id int, label int)');
      await db.query('insert into prepared_probe values (1, 10)');
      const probe = prepared('select label from prepared_probe where id = $1');
      expect((await db.query(probe, [1])).rows).to.deep.equal([{ label: 10 }]);
      const kept = await db.query<{ statement: string }>('select statement from pg_prepared_statements');
      expect(kept.rows.map((r) => r.statement)).to.deep.equal([probe]);

      // A migration changes the returned column's type while the process runs: the kept plan no
      // longer fits, the call fails, and the next one runs on a new connection.
      await db.query('alter table prepared_probe alter column label type text');
      const stale = await db.query(probe, [1]).catch((error: unknown) => error as { code?: string });
      expect(stale).to.have.property('code', '0A000');
      expect((await db.query(probe, [1])).rows).to.deep.equal([{ label: '10' }]);
    } finally {
      await db.close();
    }
  });
});
