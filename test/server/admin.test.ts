import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { hashApiKey } from '../../shared/apiKeys.js';
import * as apiKeyUsage from '../../shared/db/tables/apiKeyUsage.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';

const TOKEN = 'admin-token-for-tests-0123456789abcdef';
const bearer = `Bearer ${TOKEN}`;

describe('admin API /admin/v1', () => {
  const t = useTestDb();
  const opened: Deps[] = [];
  after(async () => {
    await Promise.all(opened.map((d) => d.services.close()));
  });
  const appWith = (env: Record<string, string> = { ADMIN_TOKEN: TOKEN }) => {
    const deps = testDeps(t.db, env);
    opened.push(deps);
    return createApp(deps);
  };
  let app: ReturnType<typeof createApp>;
  before(() => {
    app = appWith();
  });
  const admin = {
    get: (path: string) => request(app).get(`/admin/v1${path}`).set('authorization', bearer),
    post: (path: string, body: object = {}) => request(app).post(`/admin/v1${path}`).set('authorization', bearer).send(body),
    patch: (path: string, body: object) => request(app).patch(`/admin/v1${path}`).set('authorization', bearer).send(body),
    delete: (path: string) => request(app).delete(`/admin/v1${path}`).set('authorization', bearer),
  };

  it('is off (404) without ADMIN_TOKEN, and ADMIN_TOKEN must be long', async () => {
    const off = appWith({});
    for (const path of ['/admin/v1/keys', '/admin/v1/openapi.json']) {
      const res = await request(off).get(path).set('authorization', bearer);
      expect(res.status, path).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    }
    expect(() => testDeps(t.db, { ADMIN_TOKEN: 'short' })).to.throw(/ADMIN_TOKEN/);
  });

  it('refuses a missing or wrong token and an API key with 401 JSON, never cached', async () => {
    const apiKey = await createTestKey(t.db, 'not-an-operator');
    const fresh = appWith();
    const attempts = [
      request(fresh).get('/admin/v1/keys'),
      request(fresh).get('/admin/v1/keys').set('authorization', `Bearer ${TOKEN}x`),
      request(fresh).get('/admin/v1/keys').set('authorization', `Bearer ${apiKey}`).set('x-api-key', apiKey),
    ];
    for (const attempt of attempts) {
      const res = await attempt;
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ code: 'UNAUTHORIZED', param: 'authorization' });
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.headers['www-authenticate']).to.match(/^Bearer/);
    }
  });

  it('makes guessing the token slow: past a burst of failures the address gets 429, even with the right token', async () => {
    const fresh = appWith();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await request(fresh).get('/admin/v1/keys').set('authorization', `Bearer wrong-${i}`)).status);
    expect(statuses).to.include(429);
    expect(statuses.slice(0, 3)).to.deep.equal([401, 401, 401]);
    const right = await request(fresh).get('/admin/v1/keys').set('authorization', bearer);
    expect(right.status).to.equal(429);
    expect(Number(right.headers['retry-after'])).to.be.at.least(1);
    expect(right.body.code).to.equal('TOO_MANY_REQUESTS');
  });

  it('creates a plan and a key on it, lists, shows and updates them; the key works on /v0', async () => {
    const plan = await admin.post('/plans', { name: 'pro', rateLimitPerSecond: 50, requestsPerDay: 100000, networks: ['devnet'] });
    expect(plan.status, JSON.stringify(plan.body)).to.equal(201);
    expect(plan.headers['cache-control']).to.equal('no-store');
    expect(plan.body).to.include({ name: 'pro', rateLimitPerSecond: 50, burst: 150, requestsPerDay: 100000, requestsPerMonth: null });
    expect((await admin.post('/plans', { name: 'pro', rateLimitPerSecond: 1 })).status).to.equal(409);

    const created = await admin.post('/keys', {
      name: 'acme',
      plan: 'pro',
      scopes: ['read'],
      networks: ['devnet'],
      expiresAt: '2099-01-01T00:00:00Z',
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const { key, apiKey } = created.body;
    expect(key).to.match(/^ops_[0-9A-Za-z]{32}$/);
    expect(apiKey).to.include({ name: 'acme', prefix: key.slice(0, 12), active: true, expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(apiKey.plan).to.deep.equal({ id: plan.body.id, name: 'pro' });
    expect(apiKey.scopes).to.deep.equal(['read']);
    expect(apiKey.networks).to.deep.equal(['devnet']);
    const stored = await t.db.query<{ key_hash: string }>('select key_hash from api_keys where id = $1', [apiKey.id]);
    expect(stored.rows[0]!.key_hash).to.equal(hashApiKey(key));
    expect((await request(app).get('/v0/getNetworks').set('x-api-key', key)).status).to.equal(200);

    const listed = await admin.get('/keys');
    expect(listed.status).to.equal(200);
    expect(listed.body.keys.map((k: { prefix: string }) => k.prefix)).to.include(apiKey.prefix);
    expect(JSON.stringify(listed.body)).not.to.include(key);
    expect((await admin.get(`/keys/${apiKey.prefix}`)).body.id).to.equal(apiKey.id);
    expect((await admin.get(`/keys/${apiKey.id}`)).body.prefix).to.equal(apiKey.prefix);

    const updated = await admin.patch(`/keys/${apiKey.id}`, {
      scopes: ['read', 'webhooks'],
      plan: null,
      rateLimitPerSecond: 7,
      networks: null,
    });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(updated.body).to.include({ rateLimitPerSecond: 7, plan: null, networks: null });
    expect(updated.body.scopes).to.deep.equal(['read', 'webhooks']);

    const plans = await admin.get('/plans');
    expect(plans.body.plans.find((p: { name: string }) => p.name === 'pro')).to.include({ keys: 0 });
    const renamed = await admin.patch(`/plans/pro`, { name: 'pro-2', requestsPerDay: null });
    expect(renamed.body).to.include({ name: 'pro-2', requestsPerDay: null, rateLimitPerSecond: 50 });
  });

  it('rotates a key: the new key works, the old one is kept with an expiry in the grace period and replacedBy', async () => {
    const { body: created } = await admin.post('/keys', { name: 'rotating', scopes: ['read'] });
    const rotated = await admin.post(`/keys/${created.apiKey.prefix}/rotate`, { graceHours: 2 });
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(201);
    expect(rotated.body.key).to.not.equal(created.key);
    expect(rotated.body.apiKey).to.include({ name: 'rotating', active: true, replacedBy: null });
    expect(rotated.body.apiKey.scopes).to.deep.equal(['read']);
    const old = (await admin.get(`/keys/${created.apiKey.id}`)).body;
    expect(old.replacedBy).to.equal(rotated.body.apiKey.id);
    const expiresIn = Date.parse(old.expiresAt) - Date.now();
    expect(expiresIn).to.be.within(2 * 3_600_000 - 60_000, 2 * 3_600_000);
    for (const k of [created.key, rotated.body.key])
      expect((await request(app).get('/v0/getNetworks').set('x-api-key', k)).status).to.equal(200);
    // Default grace: 24 h.
    const again = await admin.post(`/keys/${rotated.body.apiKey.id}/rotate`);
    expect(Date.parse(again.body.replaced.expiresAt) - Date.now()).to.be.within(24 * 3_600_000 - 60_000, 24 * 3_600_000);
  });

  it('revokes a key: 403 on /v0, and it cannot be rotated', async () => {
    const { body: created } = await admin.post('/keys', { name: 'doomed' });
    const revoked = await admin.post(`/keys/${created.apiKey.id}/revoke`);
    expect(revoked.status).to.equal(200);
    expect(revoked.body.active).to.equal(false);
    expect(revoked.body.revokedAt).to.be.a('string');
    expect((await request(app).get('/v0/getNetworks').set('x-api-key', created.key)).status).to.equal(403);
    expect((await admin.post(`/keys/${created.apiKey.id}/rotate`)).status).to.equal(409);
  });

  it('imports a key with a plan', async () => {
    await admin.post('/plans', { name: 'legacy', rateLimitPerSecond: 5 });
    const jiffy = 'Jf7vLmA2bC7dE1fG4hJ8kN0pR5sT6uW2yZ4aB9cQ';
    const res = await admin.post('/keys/import', { name: 'from-jiffyscan', key: jiffy, plan: 'legacy' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.plan.name).to.equal('legacy');
    expect(JSON.stringify(res.body)).not.to.include(jiffy);
    expect((await request(app).get('/jiffyscan/v0/getNetworks').set('x-api-key', jiffy)).status).to.equal(200);
    expect((await admin.post('/keys/import', { name: 'twice', key: jiffy })).status).to.equal(409);
  });

  it('refuses to delete a plan keys use (409), deletes an unused one', async () => {
    await admin.post('/plans', { name: 'busy', rateLimitPerSecond: 5 });
    await admin.post('/keys', { name: 'on-busy', plan: 'busy' });
    const refused = await admin.delete('/plans/busy');
    expect(refused.status).to.equal(409);
    expect(refused.body).to.include({ code: 'CONFLICT', param: 'plan', keys: 1 });
    await admin.post('/plans', { name: 'idle', rateLimitPerSecond: 5 });
    const deleted = await admin.delete('/plans/idle');
    expect(deleted.status).to.equal(200);
    expect(deleted.body.deleted.name).to.equal('idle');
    expect((await admin.delete('/plans/idle')).status).to.equal(404);
  });

  it('deletes a plan whose keys are all revoked or expired: they no longer use it, and are taken off it', async () => {
    await admin.post('/plans', { name: 'retired', rateLimitPerSecond: 5 });
    const { body: created } = await admin.post('/keys', { name: 'on-retired', plan: 'retired' });
    // Rotated with no grace: the old key is expired at once, the new one is revoked below.
    const { body: rotated } = await admin.post(`/keys/${created.apiKey.id}/rotate`, { graceHours: 0 });
    expect((await admin.delete('/plans/retired')).body).to.include({ code: 'CONFLICT', keys: 1 });
    await admin.post(`/keys/${rotated.apiKey.id}/revoke`);
    const deleted = await admin.delete('/plans/retired');
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
    for (const id of [created.apiKey.id, rotated.apiKey.id]) {
      const key = (await admin.get(`/keys/${id}`)).body;
      expect(key).to.include({ active: false, plan: null });
    }
  });

  it('answers 400 naming the bad field, 404 for unknown keys and plans', async () => {
    const bad: Array<[() => request.Test, string]> = [
      [() => admin.post('/plans', { name: '1abc', rateLimitPerSecond: 1 }), 'name'],
      [() => admin.post('/plans', { name: 'x', rateLimitPerSecond: 0 }), 'rateLimitPerSecond'],
      [() => admin.post('/plans', { name: 'x' }), 'rateLimitPerSecond'],
      [() => admin.post('/keys', {}), 'name'],
      [() => admin.post('/keys', { name: 'k', scopes: ['write'] }), 'scopes.0'],
      [() => admin.post('/keys', { name: 'k', networks: ['atlantis'] }), 'networks.0'],
      [() => admin.post('/keys', { name: 'k', expiresAt: 'tomorrow' }), 'expiresAt'],
      [() => admin.post('/keys', { name: 'k', rateLimitPerSecond: -1 }), 'rateLimitPerSecond'],
      [() => admin.post('/keys/import', { name: 'k', key: 'short' }), 'key'],
      [() => admin.get('/usage?groupBy=week'), 'groupBy'],
      [() => admin.get('/usage?days=1000'), 'days'],
      [() => admin.get('/usage?groupBy=hour&days=60'), 'from'],
      [() => admin.get('/usage?from=2026-01-02&to=2026-01-01'), 'from'],
    ];
    for (const [send, param] of bad) {
      const res = await send();
      expect(res.status, `${param}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.param, JSON.stringify(res.body)).to.equal(param);
      expect(res.body.message).to.include(param);
    }
    const { body: created } = await admin.post('/keys', { name: 'k' });
    const nothing = await admin.patch(`/keys/${created.apiKey.id}`, {});
    expect(nothing.status).to.equal(400);
    expect(nothing.body.message).to.match(/nothing to change/);
    const notFound: Array<[() => request.Test, string]> = [
      [() => admin.get('/keys/99999999'), 'key'],
      [() => admin.get('/keys/ops_notthere'), 'key'],
      [() => admin.post('/keys', { name: 'k', plan: 'nosuchplan' }), 'plan'],
      [() => admin.patch('/plans/nosuchplan', { burst: 3 }), 'plan'],
      [() => admin.get('/usage?key=ops_notthere'), 'key'],
    ];
    for (const [send, param] of notFound) {
      const res = await send();
      expect(res.status, param).to.equal(404);
      expect(res.body).to.include({ code: 'NOT_FOUND', param });
    }
    expect((await admin.get('/nothing')).status).to.equal(404);
    const malformed = await request(app)
      .post('/admin/v1/keys')
      .set('authorization', bearer)
      .set('content-type', 'application/json')
      .send('{"name":');
    expect(malformed.status).to.equal(400);
  });

  it('answers the usage counted: per key per day and hour, per endpoint, top keys', async () => {
    const { body: a } = await admin.post('/keys', { name: 'usage-a' });
    const { body: b } = await admin.post('/keys', { name: 'usage-b' });
    const day = Date.UTC(2026, 9, 20);
    const hour = (d: number, h: number) => new Date(day + d * 86_400_000 + h * 3_600_000);
    const count = (key: { apiKey: { id: string } }, at: Date, endpoint: string, [statusClass, requests]: [number, number]) => ({
      apiKeyId: key.apiKey.id,
      hour: at,
      endpoint,
      network: 'devnet',
      statusClass,
      requests,
    });
    await apiKeyUsage.addCounts(t.db, [
      count(a, hour(0, 1), 'getUserOp', [2, 10]),
      count(a, hour(0, 1), 'getUserOp', [4, 2]),
      count(a, hour(0, 5), 'graphql', [2, 5]),
      count(a, hour(1, 0), 'getUserOp', [5, 1]),
      count(b, hour(0, 1), 'getNetworks', [2, 100]),
    ]);
    // A second flush adds to the first.
    await apiKeyUsage.addCounts(t.db, [count(a, hour(0, 1), 'getUserOp', [2, 3])]);
    const range = 'from=2026-10-20&to=2026-10-22';

    const byDay = await admin.get(`/usage?${range}&groupBy=day`);
    expect(byDay.status, JSON.stringify(byDay.body)).to.equal(200);
    const rowsOf = (rows: Array<{ period: string; key: { name: string }; requests: number; clientErrors: number; serverErrors: number }>) =>
      rows.map((r) => [r.period, r.key.name, r.requests, r.clientErrors, r.serverErrors]);
    expect(rowsOf(byDay.body.rows)).to.deep.equal([
      ['2026-10-20T00:00:00.000Z', 'usage-b', 100, 0, 0],
      ['2026-10-20T00:00:00.000Z', 'usage-a', 20, 2, 0],
      ['2026-10-21T00:00:00.000Z', 'usage-a', 1, 0, 1],
    ]);
    const oneKey = await admin.get(`/usage?${range}&groupBy=hour&key=${a.apiKey.prefix}`);
    expect(rowsOf(oneKey.body.rows)).to.deep.equal([
      ['2026-10-20T01:00:00.000Z', 'usage-a', 15, 2, 0],
      ['2026-10-20T05:00:00.000Z', 'usage-a', 5, 0, 0],
      ['2026-10-21T00:00:00.000Z', 'usage-a', 1, 0, 1],
    ]);
    const topOne = await admin.get(`/usage?${range}&groupBy=day&limit=1`);
    expect(topOne.body.rows.map((r: { key: { name: string } }) => r.key.name)).to.deep.equal(['usage-b']);

    const byEndpoint = await admin.get(`/usage?${range}&groupBy=endpoint&key=${a.apiKey.id}`);
    expect(byEndpoint.body.rows).to.deep.equal([
      { endpoint: 'getUserOp', requests: 16, clientErrors: 2, serverErrors: 1 },
      { endpoint: 'graphql', requests: 5, clientErrors: 0, serverErrors: 0 },
    ]);
    const top = await admin.get(`/usage?${range}&groupBy=key`);
    expect(top.body.rows.map((r: { key: { name: string }; requests: number }) => [r.key.name, r.requests])).to.deep.equal([
      ['usage-b', 100],
      ['usage-a', 21],
    ]);
    expect(top.body).to.include({ from: '2026-10-20T00:00:00.000Z', to: '2026-10-22T00:00:00.000Z', groupBy: 'key' });
    // The default range is the last 7 days: none of the above.
    expect((await admin.get('/usage?groupBy=key')).body.rows).to.deep.equal([]);
  });

  it('is offered at /docs beside the /v0 document when it is on, and only then', async () => {
    const init = async (server: ReturnType<typeof createApp>) => {
      expect((await request(server).get('/docs/')).status).to.equal(200);
      const res = await request(server).get('/docs/swagger-ui-init.js');
      expect(res.status).to.equal(200);
      return res.text;
    };
    const withAdmin = await init(appWith());
    expect(withAdmin).to.include('"url": "/admin/v1/openapi.json"').and.include('"url": "/v0/openapi.json"');
    expect(withAdmin).to.include('opscan admin API (/admin/v1)');
    // Both documents the selector offers are served.
    for (const url of ['/v0/openapi.json', '/admin/v1/openapi.json']) expect((await request(app).get(url)).status, url).to.equal(200);
    expect(await init(appWith({}))).not.to.include('/admin/v1');
  });

  it('publishes its own OpenAPI document: every route, bearer auth required', async () => {
    const res = await request(app).get('/admin/v1/openapi.json');
    expect(res.status).to.equal(200);
    const doc = JSON.parse(res.text);
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.servers).to.deep.equal([{ url: '/admin/v1' }]);
    expect(doc.security).to.deep.equal([{ AdminToken: [] }]);
    expect(doc.components.securitySchemes.AdminToken).to.include({ type: 'http', scheme: 'bearer' });
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).to.deep.equal(
      [
        'GET /keys',
        'POST /keys',
        'POST /keys/import',
        'GET /keys/{key}',
        'PATCH /keys/{key}',
        'POST /keys/{key}/rotate',
        'POST /keys/{key}/revoke',
        'GET /plans',
        'POST /plans',
        'PATCH /plans/{plan}',
        'DELETE /plans/{plan}',
        'GET /usage',
      ].sort(),
    );
    const createKey = doc.paths['/keys'].post;
    expect(createKey.requestBody.content['application/json'].schema.required).to.deep.equal(['name']);
    expect(createKey.responses['201'].content['application/json'].schema).to.be.an('object');
    expect(doc.paths['/usage'].get.parameters.map((p: { name: string }) => p.name)).to.include.members(['key', 'groupBy', 'from', 'to']);
    expect(doc.paths['/keys/{key}'].patch.parameters[0]).to.include({ name: 'key', in: 'path', required: true });
    expect(doc.components.schemas).to.have.property('ApiKey');
    // Every $ref resolves.
    for (const [, ref] of res.text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      expect(doc.components.schemas, ref).to.have.property(ref!);
  });
});
