/**
 * Outbox pruning: events the matcher has passed and that are older than
 * OUTBOX_RETENTION_HOURS go; events not yet matched (not final, or no dispatcher ever ran on their
 * chain) stay; the deliveries list and replay, which read webhook_deliveries, answer as before.
 */
import { expect } from 'chai';
import { createLogger } from '../../shared/log.js';
import { pruneOutbox } from '../../webhooks/pruneDeliveries.js';
import { insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { useReceiver } from './support/receiver.js';

const log = createLogger({ level: 'silent', name: 'test' });

describe('outbox pruning: matched events past the retention', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  const receiver = useReceiver();

  const outbox = async (): Promise<Array<{ chainId: number; blockNumber: number }>> =>
    (
      await h.db.query<{ chain_id: string; block_number: string }>(`select chain_id, block_number from outbox_events order by chain_id, id`)
    ).rows.map((r) => ({ chainId: Number(r.chain_id), blockNumber: Number(r.block_number) }));
  const ageOutbox = (hours: number) => h.db.query(`update outbox_events set created_at = now() - make_interval(hours => $1)`, [hours]);

  it('deletes matched events older than the retention, keeps the rest, and replay still sends the same bytes', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    for (let block = 1; block <= 3; block++) await insertOp(h.db, makeOp({ sender, blockNumber: block }));
    await setIndexedBlock(h.db, 3);
    await h.startDispatcher();
    await h.waitForDeliveries('delivered', 3);
    // Block 9 is above the indexed head: the matcher leaves it for later.
    await insertOp(h.db, makeOp({ sender, blockNumber: 9 }));
    // A chain no dispatcher follows (no cursor) keeps every event, however old.
    await insertOp(h.db, makeOp({ blockNumber: 1 }), { chainId: 8453 });
    await ageOutbox(30);

    expect(await pruneOutbox(h.db, log, new Date(), 48), 'nothing is older than 48 hours').to.equal(0);
    expect(await pruneOutbox(h.db, log, new Date(), 24)).to.equal(3);
    expect(await outbox()).to.deep.equal([
      { chainId: 8453, blockNumber: 1 },
      { chainId: 31337, blockNumber: 9 },
    ]);

    const listed = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(listed.body.deliveries).to.have.length(3);
    const delivery = listed.body.deliveries[0] as { id: string };
    const sentBefore = receiver.current.received.find((r) => r.headers['webhook-id'] === delivery.id)!.body;
    const replay = await h.app().post('/v0/replayWebhookDelivery').query({ id: delivery.id }).set('x-api-key', h.key);
    expect(replay.status).to.equal(200);
    expect(replay.body.delivery).to.include({ id: delivery.id, status: 'delivered', attempts: 2 });
    const resent = receiver.current.received.filter((r) => r.headers['webhook-id'] === delivery.id);
    expect(resent).to.have.length(2);
    expect(resent[1]!.body).to.equal(sentBefore);

    // The matcher goes on past the pruned ids: the held event is delivered once final (recorded
    // now again: a webhook hears only of events recorded after it was created).
    await h.db.query(`update outbox_events set created_at = now()`);
    await setIndexedBlock(h.db, 9);
    await h.waitForDeliveries('delivered', 4);
  });

  it('with retention 0 deletes every matched event at once, in chunks beyond one delete', async () => {
    await h.startDispatcher();
    const sender = randomAddress();
    await h.db.query(
      `insert into outbox_events (chain_id, type, block_number, user_op_hash, payload)
       select 31337, 'reorg', 1, null, jsonb_build_object('commonAncestor', 0, 'removedFromBlock', 1,
              'removedUserOpHashes', '[]'::jsonb, 'removedAccounts', jsonb_build_array($1::text))
         from generate_series(1, 5001)`,
      [sender],
    );
    await setIndexedBlock(h.db, 1);
    for (let waited = 0; ; waited += 50) {
      const { rows } = await h.db.query<{ behind: boolean }>(
        `select (select last_event_id from webhook_outbox_cursors where chain_id = 31337) < (select max(id) from outbox_events) as behind`,
      );
      if (!rows[0]!.behind) break;
      if (waited > 20_000) throw new Error('the matcher did not reach the end of the outbox');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await pruneOutbox(h.db, log, new Date(), 0)).to.equal(5001);
    expect(await outbox()).to.deep.equal([]);
  });
});
