import { expect } from 'chai';
import { insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { startReceiver, verifySignature } from './support/receiver.js';
import { spawnDispatcher } from './support/spawnDispatcher.js';

describe('webhook dispatcher: crash', function () {
  this.timeout(120_000);
  const h = useWebhookHarness();

  it('loses nothing when a dispatcher is SIGKILLed mid-batch: every event arrives, same webhook-id', async function () {
    // Two processes cannot share an in-memory PGlite: this one needs PostgreSQL.
    if (!h.url) this.skip();
    const receiver = await startReceiver(() => ({ delayMs: 40 }));
    try {
      const sender = randomAddress();
      const hook = await h.createWebhook(receiver.url, 'ADDRESS', sender);
      for (let i = 0; i < 120; i++) await insertOp(h.db, makeOp({ sender, blockNumber: 1 + i, logIndex: i }));
      await setIndexedBlock(h.db, 200);

      const options = { pollIntervalMs: 50, leaseMs: 1500, concurrency: 6 };
      const child = await spawnDispatcher(h.url, options);
      await receiver.waitFor(() => receiver.received.length >= 30);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const atKill = receiver.received.length;
      const { rows } = await h.db.query<{ n: string }>(`select count(*) as n from webhook_deliveries where status = 'pending'`);
      expect(Number(rows[0]!.n), 'work left pending by the killed dispatcher').to.be.greaterThan(0);

      await h.startDispatcher(options);
      await receiver.waitFor(() => receiver.delivered().size === 120, 60_000);
      expect(atKill).to.be.lessThan(120);

      const { rows: ids } = await h.db.query<{ id: string }>(`select id from webhook_deliveries`);
      expect(new Set(receiver.received.map((r) => String(r.headers['webhook-id'])))).to.deep.equal(new Set(ids.map((r) => r.id)));
      const bodies = new Map<string, string>();
      for (const r of receiver.received) {
        verifySignature(hook.secret, r);
        const id = String(r.headers['webhook-id']);
        if (bodies.has(id)) expect(r.body).to.equal(bodies.get(id));
        bodies.set(id, r.body);
      }
    } finally {
      await receiver.close();
    }
  });
});
