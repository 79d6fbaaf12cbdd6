import { expect } from 'chai';
import type { Db } from '../../shared/db/client.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import type { WebhookFilter } from '../../shared/models/webhook.js';
import { newWebhookId } from '../../shared/webhookIds.js';
import { loadKeyring } from '../../shared/webhookKeyring.js';
import { encryptSecret, generateSigningSecret } from '../../shared/webhookSecrets.js';
import { DEVNET, insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { startReceiver, verifySignature, type Receiver } from './support/receiver.js';

/** A webhook written straight to the table, past createWebhook's URL checks (as an attacker's DNS change would). */
async function insertRawWebhook(db: Db, url: string, filter: WebhookFilter, address: string) {
  const keyring = await loadKeyring(db, undefined);
  const { rows } = await db.query<{ id: string }>(`select id from api_keys order by id limit 1`);
  const id = newWebhookId();
  const secret = generateSigningSecret();
  await webhooks.insert(db, {
    id,
    apiKeyId: rows[0]!.id,
    apiName: 'raw',
    url,
    filter,
    identifier: address,
    address,
    chainId: DEVNET,
    secretCiphertext: encryptSecret(keyring, id, secret),
  });
  return { id, secret };
}

async function insertOps(db: Db, count: number, sender: string) {
  const ops = Array.from({ length: count }, (_, i) => makeOp({ sender, blockNumber: 1 + i, logIndex: i }));
  for (const op of ops) await insertOp(db, op);
  await setIndexedBlock(db, count + 1);
  return ops;
}

/** Every request of one webhook-id carries the same bytes; each verifies. */
function expectStableAndSigned(receiver: Receiver, secret: string) {
  const bodyById = new Map<string, string>();
  for (const r of receiver.received) {
    const id = String(r.headers['webhook-id']);
    verifySignature(secret, r);
    if (bodyById.has(id)) expect(r.body, `retry of ${id}`).to.equal(bodyById.get(id));
    bodyById.set(id, r.body);
  }
}

describe('webhook dispatcher: failures, retries, SSRF', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  afterEach(() => Promise.all(receivers.splice(0).map((r) => r.close())));

  it('delivers every event at least once under the same webhook-id to a receiver failing half the requests', async () => {
    let seed = 42;
    const coin = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 < 0.5;
    const flaky = await receiver(() => ({ status: coin() ? 500 : 200 }));
    const sender = randomAddress();
    const hook = await h.createWebhook(flaky.url, 'ADDRESS', sender);
    await insertOps(h.db, 40, sender);
    await h.startDispatcher();
    await flaky.waitFor(() => flaky.delivered().size === 40);
    await h.waitForDeliveries('delivered', 40); // the receiver has the requests before their answers are recorded
    expect(flaky.received.filter((r) => r.status === 500).length).to.be.greaterThan(5);
    expectStableAndSigned(flaky, hook.secret);
    const failedIds = new Set(flaky.received.filter((r) => r.status === 500).map((r) => String(r.headers['webhook-id'])));
    for (const id of failedIds) expect(flaky.delivered().has(id), id).to.equal(true);
    // The attempt log tells the story: status codes per attempt.
    const log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id, limit: 100 }).set('x-api-key', h.key);
    expect(log.body.deliveries).to.have.length(40);
    const retried = log.body.deliveries.find((d: { attempts: number }) => d.attempts > 1);
    expect(retried.status).to.equal('delivered');
    expect(retried.attemptLog.map((a: { responseStatus: number }) => a.responseStatus)).to.include.members([500, 200]);
  });

  it('retries a receiver that times out, with the same bytes', async () => {
    const slow = await receiver((n) => (n < 3 ? { delayMs: 1500 } : {}));
    const sender = randomAddress();
    const hook = await h.createWebhook(slow.url, 'ADDRESS', sender);
    await insertOps(h.db, 3, sender);
    await h.startDispatcher({ timeoutMs: 300 });
    await slow.waitFor(() => slow.received.length >= 6 && slow.delivered().size === 3);
    expectStableAndSigned(slow, hook.secret);
    const log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    const errors = log.body.deliveries.flatMap((d: { attemptLog: Array<{ error: string | null }> }) => d.attemptLog.map((a) => a.error));
    expect(errors).to.include('timed out');
  });

  it('honours Retry-After', async () => {
    const busy = await receiver((n) => (n === 0 ? { status: 503, headers: { 'retry-after': '1' } } : {}));
    const sender = randomAddress();
    await h.createWebhook(busy.url, 'ADDRESS', sender);
    await insertOps(h.db, 1, sender);
    await h.startDispatcher();
    await busy.waitFor(() => busy.delivered().size === 1);
    expect(busy.received[1]!.at - busy.received[0]!.at).to.be.at.least(900);
  });

  it('disables a webhook answering 410 Gone and cancels what it had pending', async () => {
    const gone = await receiver(() => ({ status: 410 }));
    const sender = randomAddress();
    const hook = await h.createWebhook(gone.url, 'ADDRESS', sender);
    await insertOps(h.db, 5, sender);
    await h.startDispatcher({ concurrency: 1 });
    await gone.waitFor(() => gone.received.length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(gone.received).to.have.length(1);
    const list = await h.app().get('/v0/listWebhooks').set('x-api-key', h.key);
    expect(list.body.webhooks[0]).to.include({ id: hook.id, status: 'disabled', disabledReason: 'gone' });
    const log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(log.body.deliveries.map((d: { status: string }) => d.status).sort()).to.deep.equal([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
      'failed',
    ]);
  });

  it('gives up after the last scheduled attempt', async () => {
    const down = await receiver(() => ({ status: 500 }));
    const sender = randomAddress();
    const hook = await h.createWebhook(down.url, 'ADDRESS', sender);
    await insertOps(h.db, 1, sender);
    await h.startDispatcher({ retrySchedule: [0, 10, 10, 10] });
    await down.waitFor(() => down.received.length === 4);
    await new Promise((r) => setTimeout(r, 200));
    expect(down.received).to.have.length(4);
    const log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(log.body.deliveries[0]).to.include({ status: 'failed', attempts: 4 });
    expect(new Set(down.received.map((r) => r.headers['webhook-id'])).size).to.equal(1);
  });

  it('does not follow redirects', async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(() => ({ status: 302, headers: { location: elsewhere.url } }));
    const sender = randomAddress();
    const hook = await h.createWebhook(redirecting.url, 'ADDRESS', sender);
    await insertOps(h.db, 1, sender);
    await h.startDispatcher({ retrySchedule: [0, 10] });
    await redirecting.waitFor(() => redirecting.received.length === 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(elsewhere.received).to.have.length(0);
    const log = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(log.body.deliveries[0].attemptLog.map((a: { responseStatus: number }) => a.responseStatus)).to.deep.equal([302, 302]);
  });

  it('refuses private targets at connect time: literal IPs, IPv6, IPv4-mapped, and names resolving to loopback', async () => {
    const target = await receiver();
    const port = new URL(target.url).port;
    const sender = randomAddress();
    const urls = [
      `http://127.0.0.1:${port}/hook`,
      `http://[::1]:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://2130706433:${port}/hook`,
      `https://127.0.0.1.nip.io:${port}/hook`,
      `https://rebind.example.com:${port}/hook`,
    ];
    const hooks = [];
    for (const url of urls) hooks.push(await insertRawWebhook(h.db, url, 'ADDRESS', sender));
    await insertOps(h.db, 1, sender);
    // No DNS here: the resolver plays an attacker's name server answering loopback.
    const resolve = async (host: string) => (host === 'rebind.example.com' ? ['8.8.8.8', '127.0.0.1'] : ['127.0.0.1']);
    await h.startDispatcher({ retrySchedule: [0], resolve }, { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    const { rows } = await waitForRows(h.db, urls.length);
    expect(rows.every((r) => r.status === 'failed')).to.equal(true);
    expect(target.received).to.have.length(0);
    const errors = await h.db.query<{ error: string }>(`select error from webhook_attempts`);
    expect(errors.rows).to.have.length(urls.length);
    for (const { error } of errors.rows) expect(error).to.match(/refused to connect/);
  });

  it('keeps the retry schedule across a restart', async () => {
    const recovering = await receiver((n) => ({ status: n === 0 ? 500 : 200 }));
    const sender = randomAddress();
    const hook = await h.createWebhook(recovering.url, 'ADDRESS', sender);
    await insertOps(h.db, 1, sender);
    const first = await h.startDispatcher({ retrySchedule: [0, 800] });
    await recovering.waitFor(() => recovering.received.length === 1);
    await first.stop();
    const pending = await h.app().get('/v0/getWebhookDeliveries').query({ id: hook.id }).set('x-api-key', h.key);
    expect(pending.body.deliveries[0]).to.include({ status: 'pending', attempts: 1 });
    expect(Date.parse(pending.body.deliveries[0].nextAttemptAt)).to.be.greaterThan(Date.now());
    await h.startDispatcher({ retrySchedule: [0, 800] });
    await recovering.waitFor(() => recovering.delivered().size === 1);
    expect(recovering.received[1]!.headers['webhook-id']).to.equal(recovering.received[0]!.headers['webhook-id']);
    expect(recovering.received[1]!.at - recovering.received[0]!.at).to.be.at.least(600);
  });

  it('keeps a slow endpoint from taking every slot', async () => {
    const slow = await receiver(() => ({ delayMs: 1000 }));
    const fast = await receiver();
    const [a, b] = [randomAddress(), randomAddress()];
    await h.createWebhook(slow.url, 'ADDRESS', a);
    await h.createWebhook(fast.url, 'ADDRESS', b);
    await insertOps(h.db, 20, a); // queued first
    const started = Date.now();
    await h.startDispatcher({ concurrency: 8, perWebhook: 2 });
    for (let i = 0; i < 10; i++) await insertOp(h.db, makeOp({ sender: b, blockNumber: 30 + i }));
    await setIndexedBlock(h.db, 40);
    await fast.waitFor(() => fast.received.length === 10);
    // With every slot on the slow endpoint, the fast one would wait for 20 one-second answers.
    expect(Date.now() - started).to.be.below(2500);
  });

  it('shares the queue between two dispatchers without sending anything twice', async () => {
    const sink = await receiver(() => ({ delayMs: 5 }));
    const sender = randomAddress();
    await h.createWebhook(sink.url, 'ADDRESS', sender);
    await h.startDispatcher({ concurrency: 8 });
    await h.startDispatcher({ concurrency: 8 });
    await insertOps(h.db, 150, sender);
    await sink.waitFor(() => sink.delivered().size === 150);
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.received).to.have.length(150);
  });
});

/** Waits for `count` deliveries settled (not pending). */
async function waitForRows(db: Db, count: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await db.query<{ status: string }>(`select status from webhook_deliveries where status <> 'pending'`);
    if (res.rows.length >= count || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 50));
  }
}
