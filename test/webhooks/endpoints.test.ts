import { expect } from 'chai';
import request from 'supertest';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { AddressInfo } from 'node:net';
import type { AppRouter } from '../../server/trpc/router.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { webhookSchema } from '../../shared/models/webhook.js';
import { loadKeyring } from '../../shared/webhookKeyring.js';
import { decryptSecret } from '../../shared/webhookSecrets.js';
import { webhookWithStatusSchema } from '../../shared/models/webhookDelivery.js';
import { createTestApp, createTestKey } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';

const ADDRESS = '0x1111111111111111111111111111111111111111';
const valid = {
  webhookUrl: 'https://hooks.example.com/opscan',
  filter: 'ADDRESS' as const,
  identifier: ADDRESS,
  chainId: '31337',
  apiName: 'mine',
};

describe('webhook management endpoints', () => {
  const t = useTestDb();
  let key: string;
  let otherKey: string;
  const app = (env: Record<string, string> = {}) => request(createTestApp(t.db, env));

  before(async () => {
    key = await createTestKey(t.db, 'first');
    otherKey = await createTestKey(t.db, 'second');
  });

  it('creates a webhook that echoes its inputs, with an id, createdAt and its secret (once)', async () => {
    const res = await app().get('/v0/createWebhook').query(valid).set('x-api-key', key);
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    const webhook = webhookSchema.extend({ secret: webhookSchema.shape.id }).parse(res.body.webhook);
    expect(webhook).to.include({ webhookUrl: valid.webhookUrl, filter: 'ADDRESS', identifier: ADDRESS, chainId: '31337', apiName: 'mine' });
    expect(webhook.id).to.match(/^wh_[0-9A-Z]{26}$/);
    expect(webhook.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(webhook.createdAt) - Date.now())).to.be.below(60_000);
    expect(webhook.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);

    // Stored encrypted, never in clear, and recoverable with the keyring.
    const stored = await webhooks.findById(t.db, webhook.id);
    expect(stored!.secretCiphertext).not.to.include(webhook.secret.slice(6));
    const keyring = await loadKeyring(t.db, undefined);
    expect(decryptSecret(keyring, webhook.id, stored!.secretCiphertext)).to.equal(webhook.secret);

    const list = await app().get('/v0/listWebhooks').set('x-api-key', key);
    expect(list.status).to.equal(200);
    const listed = list.body.webhooks.map((w: unknown) => webhookWithStatusSchema.parse(w));
    expect(listed.map((w: { id: string }) => w.id)).to.include(webhook.id);
    expect(JSON.stringify(list.body)).not.to.include('whsec_');
  });

  it('accepts POST with a JSON body and an integer chainId', async () => {
    const res = await app()
      .post('/v0/createWebhook')
      .set('x-api-key', key)
      .send({ ...valid, chainId: 31337, filter: 'paymaster', webhookUrl: 'https://hooks.example.com/post' });
    expect(res.status).to.equal(200);
    expect(res.body.webhook).to.include({ chainId: '31337', filter: 'PAYMASTER' });
  });

  it('answers 409 naming the existing webhook for an identical one (address case ignored)', async () => {
    const first = await app()
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'https://hooks.example.com/dup' })
      .set('x-api-key', key);
    const again = await app()
      .get('/v0/createWebhook')
      .query({
        ...valid,
        webhookUrl: 'https://hooks.example.com/dup',
        identifier: ADDRESS.toUpperCase().replace('0X', '0x'),
        chainId: 31337,
      })
      .set('x-api-key', key);
    expect(again.status).to.equal(409);
    expect(again.body).to.include({ code: 'CONFLICT', webhookId: first.body.webhook.id });
    expect(again.body.message).to.include(first.body.webhook.id);
    // Another key may subscribe to the same thing.
    const other = await app()
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'https://hooks.example.com/dup' })
      .set('x-api-key', otherKey);
    expect(other.status).to.equal(200);
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a missing webhookUrl', { webhookUrl: undefined }, 'webhookUrl'],
    ['an unknown filter', { filter: 'SENDER' }, 'filter'],
    ['a malformed identifier', { identifier: '0x1234' }, 'identifier'],
    ['an identifier with a bad checksum', { identifier: '0xAbCdEf0000000000000000000000000000000000' }, 'identifier'],
    ['the zero address as paymaster', { filter: 'PAYMASTER', identifier: '0x0000000000000000000000000000000000000000' }, 'identifier'],
    ['an unknown chain', { chainId: '1' }, 'chainId'],
    ['a non-numeric chain', { chainId: 'devnet' }, 'chainId'],
    ['a missing apiName', { apiName: undefined }, 'apiName'],
    ['an http:// URL', { webhookUrl: 'http://hooks.example.com/x' }, 'webhookUrl'],
    ['a relative URL', { webhookUrl: '/hook' }, 'webhookUrl'],
  ];
  for (const [what, change, param] of bad) {
    it(`answers 400 naming "${param}" for ${what}`, async () => {
      const query = Object.fromEntries(Object.entries({ ...valid, ...change }).filter(([, v]) => v !== undefined));
      const res = await app().get('/v0/createWebhook').query(query).set('x-api-key', key);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body).to.include({ code: 'BAD_REQUEST', param });
    });
  }

  it('refuses URLs that point at private, loopback or link-local addresses (SSRF)', async () => {
    const refused = [
      'https://127.0.0.1/x',
      'https://127.1/x',
      'https://2130706433/x', // decimal 127.0.0.1
      'https://0177.0.0.1/x', // octal
      'https://0x7f.0.0.1/x', // hex
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x', // IPv4-mapped IPv6
      'https://[::ffff:a00:1]/x', // mapped 10.0.0.1
      'https://0.0.0.0/x',
      'https://10.1.2.3/x',
      'https://172.16.0.1/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/x',
      'https://[fd00::1]/x',
      'https://[fe80::1]/x',
      'https://localhost/x',
      'https://LOCALHOST./x',
      'https://api.localhost/x',
      'https://metadata.google.internal/x',
      'https://printer.local/x',
      'https://intranet/x',
      'https://user:pass@hooks.example.com/x',
      'ftp://hooks.example.com/x',
      'http://127.0.0.1:8080/x',
    ];
    for (const webhookUrl of refused) {
      const res = await app()
        .get('/v0/createWebhook')
        .query({ ...valid, webhookUrl })
        .set('x-api-key', key);
      expect(res.status, webhookUrl).to.equal(400);
      expect(res.body.param, webhookUrl).to.equal('webhookUrl');
    }
  });

  it('allows loopback over http only with WEBHOOK_ALLOW_PRIVATE_URLS=true', async () => {
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
    const loop = await app(env)
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'http://127.0.0.1:9/x' })
      .set('x-api-key', key);
    expect(loop.status).to.equal(200);
    const privateHttp = await app(env)
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'http://10.0.0.1/x' })
      .set('x-api-key', key);
    expect(privateHttp.status).to.equal(400);
    const privateHttps = await app(env)
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'https://10.0.0.1/x' })
      .set('x-api-key', key);
    expect(privateHttps.status).to.equal(200);
  });

  it('caps the number of webhooks per key (WEBHOOK_MAX_PER_KEY)', async () => {
    const capped = await createTestKey(t.db, 'capped');
    const env = { WEBHOOK_MAX_PER_KEY: '2' };
    for (const n of [1, 2]) {
      const ok = await app(env)
        .get('/v0/createWebhook')
        .query({ ...valid, webhookUrl: `https://hooks.example.com/${n}` })
        .set('x-api-key', capped);
      expect(ok.status).to.equal(200);
    }
    const third = await app(env)
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'https://hooks.example.com/3' })
      .set('x-api-key', capped);
    expect(third.status).to.equal(400);
    expect(third.body.message).to.include('2 webhooks');
  });

  it("keeps each key's webhooks to itself: list, delete, deliveries, test and replay", async () => {
    const owner = await createTestKey(t.db, 'owner');
    const stranger = await createTestKey(t.db, 'stranger');
    const created = await app()
      .get('/v0/createWebhook')
      .query({ ...valid, webhookUrl: 'https://hooks.example.com/own' })
      .set('x-api-key', owner);
    const id = created.body.webhook.id as string;

    const strangerList = await app().get('/v0/listWebhooks').set('x-api-key', stranger);
    expect(strangerList.body).to.deep.equal({ webhooks: [] });
    for (const path of ['getWebhookDeliveries', 'testWebhook']) {
      const res = await app().get(`/v0/${path}`).query({ id }).set('x-api-key', stranger);
      expect(res.status, path).to.equal(404);
    }
    const strangerDelete = await app().delete('/v0/deleteWebhook').query({ id }).set('x-api-key', stranger);
    expect(strangerDelete.status).to.equal(404);

    const ownerList = await app().get('/v0/listWebhooks').set('x-api-key', owner);
    expect(ownerList.body.webhooks.map((w: { id: string }) => w.id)).to.deep.equal([id]);
    const deleted = await app().delete('/v0/deleteWebhook').query({ id }).set('x-api-key', owner);
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ success: true });
    const again = await app().delete('/v0/deleteWebhook').query({ id }).set('x-api-key', owner);
    expect(again.status).to.equal(404);
    expect((await app().get('/v0/listWebhooks').set('x-api-key', owner)).body).to.deep.equal({ webhooks: [] });
  });

  it('answers 404 for replaying an unknown delivery', async () => {
    const res = await app().post('/v0/replayWebhookDelivery').query({ id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' }).set('x-api-key', key);
    expect(res.status).to.equal(404);
  });

  it('creates webhooks over tRPC as a mutation', async () => {
    const server = createTestApp(t.db).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trpc`;
      const client = createTRPCClient<AppRouter>({ links: [httpLink({ url, headers: { 'x-api-key': key } })] });
      const created = await client.createWebhook.mutate({ ...valid, webhookUrl: 'https://hooks.example.com/trpc', chainId: 31337 });
      expect(created.webhook.chainId).to.equal('31337');
      const listed = await client.listWebhooks.query({});
      expect(listed.webhooks.map((w) => w.id)).to.include(created.webhook.id);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
