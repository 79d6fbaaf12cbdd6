import { expect } from 'chai';
import { createTestKey } from '../helpers/app.js';
import { insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { startReceiver, verifySignature, type Receiver } from './support/receiver.js';

describe('webhook delivery endpoints: log, replay, test', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());

  it('replays a delivery with the same webhook-id and bytes, newly signed; other keys cannot', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.url, 'ADDRESS', sender);
    await insertOp(h.db, makeOp({ sender, blockNumber: 3 }));
    await setIndexedBlock(h.db, 3);
    await h.startDispatcher();
    await receiver.waitFor(() => receiver.received.length === 1);
    // The receiver has the request before the dispatcher has recorded its answer.
    let log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    for (let i = 0; i < 100 && log.body.deliveries[0]?.status !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    }
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
    expect(replay.body.delivery).to.include({ id: delivery.id, status: 'pending' });
    await receiver.waitFor(() => receiver.received.length === 2);
    const [first, second] = receiver.received;
    expect(second!.headers['webhook-id']).to.equal(first!.headers['webhook-id']);
    expect(second!.body).to.equal(first!.body);
    expect(second!.headers['webhook-timestamp']).not.to.equal(first!.headers['webhook-timestamp']);
    verifySignature(hook.secret, second!);
  });

  it('sends a signed webhook.test event and answers the first attempt', async () => {
    const hook = await h.createWebhook(receiver.url, 'PAYMASTER', randomAddress());
    await h.startDispatcher();
    const res = await h.app().post('/v0/testWebhook').query({ id: hook.id }).set('x-api-key', h.key);
    expect(res.status).to.equal(200);
    expect(res.body.delivery).to.include({ eventType: 'webhook.test', status: 'delivered' });
    expect(res.body.delivery.attemptLog[0].responseStatus).to.equal(200);
    expect(receiver.received).to.have.length(1);
    const body = verifySignature(hook.secret, receiver.received[0]!) as { type: string; webhookId: string; id: string };
    expect(body).to.include({ type: 'webhook.test', webhookId: hook.id, id: res.body.delivery.id });
  });

  it('pages the delivery log newest first', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.url, 'ADDRESS', sender);
    for (let i = 1; i <= 5; i++) await insertOp(h.db, makeOp({ sender, blockNumber: i }));
    await setIndexedBlock(h.db, 5);
    await h.startDispatcher();
    await receiver.waitFor(() => receiver.received.length === 5);
    const page1 = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id, limit: 3 }).set('x-api-key', h.key);
    const page2 = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id, limit: 3, cursor: page1.body.nextCursor }).set('x-api-key', h.key);
    expect(page1.body.deliveries).to.have.length(3);
    expect(page2.body.deliveries).to.have.length(2);
    expect(page2.body.nextCursor).to.equal(null);
    const ids = [...page1.body.deliveries, ...page2.body.deliveries].map((d: { id: string }) => d.id);
    expect(ids).to.deep.equal([...ids].sort().reverse());
  });
});
