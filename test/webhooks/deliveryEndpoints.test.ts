import { expect } from 'chai';
import { createLogger } from '../../shared/log.js';
import { pruneDeliveries } from '../../webhooks/pruneDeliveries.js';
import { createTestKey } from '../helpers/app.js';
import { insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { useReceiver, verifySignature } from './support/receiver.js';

describe('webhook delivery endpoints: log, replay, test', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  const receiver = useReceiver();

  it('replays a delivery with the same webhook-id and bytes, newly signed; other keys cannot', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    await insertOp(h.db, makeOp({ sender, blockNumber: 3 }));
    await setIndexedBlock(h.db, 3);
    await h.startDispatcher();
    await h.waitForDeliveries('delivered', 1);
    const log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(log.status).to.equal(200);
    const [delivery] = log.body.deliveries;
    expect(delivery).to.include({ eventType: 'user_operation', status: 'delivered', attempts: 1 });
    expect(delivery.attemptLog[0]).to.include({ attempt: 1, responseStatus: 200, error: null });
    expect(delivery.attemptLog[0].durationMs).to.be.a('number');

    const stranger = await createTestKey(h.db, 'stranger');
    const denied = await h.app().post('/v0/replayWebhookDelivery').query({ id: delivery.id }).set('x-api-key', stranger);
    expect(denied.status).to.equal(404);

    await new Promise((r) => setTimeout(r, 1100)); // a new second: a new webhook-timestamp
    const replay = await h.app().post('/v0/replayWebhookDelivery').query({ id: delivery.id }).set('x-api-key', h.key);
    expect(replay.status).to.equal(200);
    // The answer is the replay's outcome, as testWebhook's is its first attempt's.
    expect(replay.body.delivery).to.include({ id: delivery.id, status: 'delivered', attempts: 2 });
    expect(
      replay.body.delivery.attemptLog.map((a: { attempt: number; responseStatus: number }) => [a.attempt, a.responseStatus]),
    ).to.deep.equal([
      [1, 200],
      [2, 200],
    ]);
    expect(receiver.current.received).to.have.length(2);
    const [first, second] = receiver.current.received;
    expect(second!.headers['webhook-id']).to.equal(first!.headers['webhook-id']);
    expect(second!.body).to.equal(first!.body);
    expect(second!.headers['webhook-timestamp']).not.to.equal(first!.headers['webhook-timestamp']);
    verifySignature(hook.secret, second!);
  });

  it('sends a signed webhook.test event and answers the first attempt', async () => {
    const hook = await h.createWebhook(receiver.current.url, 'PAYMASTER', randomAddress());
    await h.startDispatcher();
    const res = await h.app().post('/v0/testWebhook').query({ id: hook.id }).set('x-api-key', h.key);
    expect(res.status).to.equal(200);
    expect(res.body.delivery).to.include({ eventType: 'webhook.test', status: 'delivered' });
    expect(res.body.delivery.attemptLog[0].responseStatus).to.equal(200);
    expect(receiver.current.received).to.have.length(1);
    const body = verifySignature(hook.secret, receiver.current.received[0]!) as { type: string; webhookId: string; id: string };
    expect(body).to.include({ type: 'webhook.test', webhookId: hook.id, id: res.body.delivery.id });
  });

  it('pages the delivery log newest first', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    for (let i = 1; i <= 5; i++) await insertOp(h.db, makeOp({ sender, blockNumber: i }));
    await setIndexedBlock(h.db, 5);
    await h.startDispatcher();
    await receiver.current.waitFor(() => receiver.current.received.length === 5);
    const page1 = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id, limit: 3 }).set('x-api-key', h.key);
    const page2 = await h
      .app()
      .get('/v0/getWebhookDeliveries')
      .query({ id: hook.id, limit: 3, cursor: page1.body.nextCursor })
      .set('x-api-key', h.key);
    expect(page1.body.deliveries).to.have.length(3);
    expect(page2.body.deliveries).to.have.length(2);
    expect(page2.body.nextCursor).to.equal(null);
    const ids = [...page1.body.deliveries, ...page2.body.deliveries].map((d: { id: string }) => d.id);
    expect(ids).to.deep.equal([...ids].sort().reverse());
  });

  it('prunes settled deliveries past the retention, never pending ones', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    for (let i = 1; i <= 3; i++) await insertOp(h.db, makeOp({ sender, blockNumber: i }));
    await setIndexedBlock(h.db, 3);
    await h.startDispatcher();
    await h.waitForDeliveries('delivered', 3);
    const log = createLogger({ level: 'silent', name: 'test' });
    // Two delivered long ago, one pending long ago: only the two go.
    await h.db.query(`update webhook_deliveries set status = 'delivered', created_at = now() - interval '40 days'`);
    await h.db.query(`update webhook_deliveries set status = 'pending', next_attempt_at = now() + interval '1 day'
                       where id = (select min(id) from webhook_deliveries)`);
    expect(await pruneDeliveries(h.db, log)).to.equal(2);
    const left = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(left.body.deliveries.map((d: { status: string }) => d.status)).to.deep.equal(['pending']);
  });
});
