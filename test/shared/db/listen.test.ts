import { expect } from 'chai';
import { createDb } from '../../../shared/db/client.js';
import { TEST_DATABASE_URL } from '../../helpers/db.js';

describe('db: LISTEN subscriptions and close', () => {
  // The embedded store always; PostgreSQL too when the tests have one.
  const stores = [{ name: 'PGlite', url: undefined }, ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', url: TEST_DATABASE_URL }] : [])];

  for (const store of stores) {
    it(`${store.name}: delivers notifications, and a subscriber that unsubscribes after the store closed finds nothing left to do`, async () => {
      const db = await createDb({ databaseUrl: store.url, max: 1 });
      const heard: string[] = [];
      const unsubscribe = await db.listen('opscan_listen_test', (payload) => heard.push(payload));
      await db.query(`select pg_notify('opscan_listen_test', 'one')`);
      for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(heard).to.deep.equal(['one']);
      // A service closed after the store it used (test teardown, a shutdown in another order).
      await db.close();
      await unsubscribe();
      await unsubscribe();
    });
  }
});
