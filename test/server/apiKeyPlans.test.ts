import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import { randomUUID } from 'node:crypto';
import { generateApiKey } from '../../shared/apiKeys.js';
import type { Db } from '../../shared/db/client.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import type { ApiKeyScope } from '../../shared/db/tables/apiKeys.js';
import * as apiKeyUsage from '../../shared/db/tables/apiKeyUsage.js';
import * as apiPlans from '../../shared/db/tables/apiPlans.js';
import { freePort, startChild, waitUntil, type Child } from '../faults/support/childProcess.js';
import { testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { TEST_REDIS_URL } from '../helpers/redis.js';

const ADMIN_TOKEN = 'admin-token-for-rotation-tests-0123456789';

/**
 * API keys as a product, enforced by two real web processes (server/main.ts) on one PostgreSQL
 * database and one Redis: usage metering, a plan's daily quota, scopes, expiry and revocation.
 */

const FLUSH_MS = 300;

type Answer = { status: number; body: Record<string, unknown>; headers: Headers };

async function get(origin: string, path: string, key: string): Promise<Answer> {
  const res = await fetch(`${origin}${path}`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

async function createKey(
  db: Db,
  options: { planId?: string; scopes?: ApiKeyScope[]; networks?: string[]; expiresAt?: Date } = {},
): Promise<{ key: string; id: string }> {
  const { key, prefix, hash } = generateApiKey();
  const stored = await apiKeys.insert(db, { prefix, hash, name: `plans-${prefix}`, ...options });
  return { key, id: stored.id };
}

/** A plan named `name` (made unique) with `limits`; by default 100/s, a burst of 100 and nothing else capped. */
function createPlan(db: Db, name: string, limits: Partial<apiPlans.ApiPlanInput>): Promise<apiPlans.ApiPlan> {
  return apiPlans.insert(db, {
    name: `${name}-${randomUUID().slice(0, 8)}`,
    rateLimitPerSecond: 100,
    burst: 100,
    requestsPerDay: null,
    requestsPerMonth: null,
    webhooksAllowed: null,
    networks: null,
    ...limits,
  });
}

/** Seconds from now until the next UTC midnight. */
const secondsToUtcMidnight = () => {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
};

describe('API keys: plans, quotas, scopes, metering (two web processes)', function () {
  const t = useTestDb();
  const webs: Array<{ child: Child; origin: string }> = [];

  before(async function () {
    if (!t.url || !TEST_REDIS_URL) this.skip();
    const env = {
      DATABASE_URL: t.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `opscan_t_keys_${randomUUID().slice(0, 8)}:`,
      NETWORKS: 'devnet,sepolia',
      DEFAULT_NETWORK: 'devnet',
      USAGE_FLUSH_INTERVAL_MS: String(FLUSH_MS),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
    };
    for (const name of ['web1', 'web2']) {
      const port = await freePort();
      const child = startChild(name, 'server/main.ts', { env: { ...env, PORT: String(port) } });
      webs.push({ child, origin: `http://127.0.0.1:${port}` });
    }
    for (const web of webs) {
      await waitUntil(
        `${web.child.name} to be ready`,
        async () => (await fetch(`${web.origin}/readyz`).catch(() => null))?.status === 200,
        60_000,
      );
    }
  });
  after(async () => {
    await Promise.all(webs.map((w) => w.child.kill('SIGTERM')));
  });
  const origins = () => webs.map((w) => w.origin);

  it('meters every call with a key, per endpoint, network and status class, exactly across both processes', async () => {
    const { key, id } = await createKey(t.db);
    const [one, two] = origins() as [string, string];
    const sent = [
      ...Array.from({ length: 7 }, () => [one, '/v0/getLatestUserOps?network=devnet'] as const),
      ...Array.from({ length: 5 }, () => [two, '/v0/getLatestUserOps?network=devnet'] as const),
      ...Array.from({ length: 3 }, () => [two, '/v0/getLatestUserOps'] as const),
      // A 400 (bad page size) and a JiffyScan-dialect call, counted under the endpoint it runs.
      [one, '/v0/getLatestUserOps?network=devnet&first=-5'] as const,
      [one, '/jiffyscan/v0/getLatestUserOps?network=devnet'] as const,
    ];
    for (const [origin, path] of sent) await get(origin, path, key);
    const expected = [
      { endpoint: 'getLatestUserOps', network: '', status_class: 2, requests: 3 },
      // Refused before its input was read: no network known.
      { endpoint: 'getLatestUserOps', network: '', status_class: 4, requests: 1 },
      { endpoint: 'getLatestUserOps', network: 'devnet', status_class: 2, requests: 13 },
    ];
    const stored = async () =>
      (
        await t.db.query<{ endpoint: string; network: string; status_class: number; requests: string }>(
          `select endpoint, network, status_class, sum(requests)::int as requests from api_key_usage where api_key_id = $1
           group by 1, 2, 3 order by 1, 2, 3`,
          [id],
        )
      ).rows;
    await waitUntil('the usage to be flushed', async () => JSON.stringify(await stored()) === JSON.stringify(expected), 10_000).catch(
      async (err: Error) => {
        throw new Error(`${err.message}: stored ${JSON.stringify(await stored())}`);
      },
    );
    const hours = await t.db.query<{ hour: Date }>(`select distinct hour from api_key_usage where api_key_id = $1`, [id]);
    for (const { hour } of hours.rows) expect(new Date(hour).getTime() % 3_600_000).to.equal(0);
    const found = await apiKeys.findById(t.db, id);
    expect(found!.lastUsedAt).to.be.an.instanceOf(Date);
    expect(Date.now() - found!.lastUsedAt!.getTime()).to.be.below(60_000);
  });

  it("refuses a key over its plan's daily quota with 429 and the reset at the next UTC midnight, on both processes", async () => {
    const plan = await createPlan(t.db, 'daily', { requestsPerDay: 5 });
    const { key } = await createKey(t.db, { planId: plan.id });
    const [one, two] = origins() as [string, string];
    for (const origin of [one, two, one, two, one]) expect((await get(origin, '/v0/getNetworks', key)).status).to.equal(200);
    for (const origin of [one, two]) {
      const refused = await get(origin, '/v0/getNetworks', key);
      expect(refused.status, origin).to.equal(429);
      expect(refused.body).to.include({ code: 'TOO_MANY_REQUESTS', quota: 'requestsPerDay', limit: 5 });
      expect(refused.body.message).to.include('requestsPerDay');
      const toMidnight = secondsToUtcMidnight();
      expect(Number(refused.headers.get('retry-after'))).to.be.within(toMidnight - 5, toMidnight + 5);
      expect(refused.headers.get('ratelimit-policy')).to.equal('"daily";q=5;w=86400');
      const reset = /^"daily";r=0;t=(\d+)$/.exec(refused.headers.get('ratelimit') ?? '');
      expect(reset, refused.headers.get('ratelimit') ?? '').to.not.equal(null);
      expect(Number(reset![1])).to.be.within(toMidnight - 5, toMidnight + 5);
    }
  });

  it("caps the webhooks a key may own at its plan's webhooksAllowed (403 naming the limit)", async () => {
    const plan = await createPlan(t.db, 'nohooks', { webhooksAllowed: 0 });
    const { key } = await createKey(t.db, { planId: plan.id });
    const query = new URLSearchParams({
      webhookUrl: 'http://127.0.0.1:9/hook',
      filter: 'ADDRESS',
      identifier: '0x1111111111111111111111111111111111111111',
      chainId: '31337',
      apiName: 'plans test',
    });
    const refused = await get(origins()[0]!, `/v0/createWebhook?${query.toString()}`, key);
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include({ code: 'FORBIDDEN', planLimit: 'webhooksAllowed', limit: 0 });
    expect(refused.body.message).to.include(plan.name);
  });

  it('refuses a capability the key lacks with 403 naming the scope (REST and tRPC alike)', async () => {
    const { key } = await createKey(t.db, { scopes: ['read'] });
    for (const origin of origins()) {
      const refused = await get(origin, '/v0/listWebhooks', key);
      expect(refused.status).to.equal(403);
      expect(refused.body).to.include({ code: 'FORBIDDEN', missingScope: 'webhooks' });
      expect(refused.body.message).to.include('"webhooks"');
      const viaTrpc = await fetch(`${origin}/trpc/listWebhooks`, { headers: { 'x-api-key': key } });
      expect(viaTrpc.status).to.equal(403);
      expect((await get(origin, '/v0/getNetworks', key)).status).to.equal(200);
    }
    const webhooksOnly = await createKey(t.db, { scopes: ['webhooks'] });
    const noRead = await get(origins()[0]!, '/v0/getLatestUserOps', webhooksOnly.key);
    expect(noRead.status).to.equal(403);
    expect(noRead.body).to.include({ missingScope: 'read' });
    expect((await get(origins()[0]!, '/v0/listWebhooks', webhooksOnly.key)).status).to.equal(200);
  });

  it("refuses networks outside the key's ∩ its plan's with 403 naming the network, a defaulted one included", async () => {
    const plan = await createPlan(t.db, 'two-nets', { networks: ['devnet', 'sepolia'] });
    const devnetOnly = await createKey(t.db, { planId: plan.id, networks: ['devnet'] });
    const sepoliaOnly = await createKey(t.db, { networks: ['sepolia'] });
    for (const origin of origins()) {
      expect((await get(origin, '/v0/getLatestUserOps?network=devnet', devnetOnly.key)).status).to.equal(200);
      const named = await get(origin, '/v0/getLatestUserOps?network=sepolia', devnetOnly.key);
      expect(named.status).to.equal(403);
      expect(named.body).to.include({ code: 'FORBIDDEN', param: 'network', network: 'sepolia' });
      expect(named.body.message).to.include('"sepolia"');
      // No network named: the deployment's default (devnet) is resolved first, then refused.
      const defaulted = await get(origin, '/v0/getLatestUserOps', sepoliaOnly.key);
      expect(defaulted.status).to.equal(403);
      expect(defaulted.body).to.include({ network: 'devnet' });
      expect((await get(origin, '/v0/getLatestUserOps?network=sepolia', sepoliaOnly.key)).status).to.equal(200);
      // A lookup by hash searches only the allowed networks (here: not found there).
      const byHash = await get(origin, `/v0/getUserOp?hash=0x${'ab'.repeat(32)}`, sepoliaOnly.key);
      expect(byHash.status).to.equal(200);
      expect(byHash.body).to.deep.equal({ userOps: [] });
      // The subgraph of another network.
      const graphql = await fetch(`${origin}/subgraphs/name/devnet`, {
        method: 'POST',
        headers: { 'x-api-key': sepoliaOnly.key, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ userOps(first: 1) { id } }' }),
      });
      expect(graphql.status).to.equal(403);
    }
  });

  it('refuses an expired key ("API key expired") and accepts one in its rotation grace period', async () => {
    const expired = await createKey(t.db, { expiresAt: new Date(Date.now() - 1000) });
    const inGrace = await createKey(t.db, { expiresAt: new Date(Date.now() + 3_600_000) });
    for (const origin of origins()) {
      const refused = await get(origin, '/v0/getNetworks', expired.key);
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.match(/^API key expired/);
      expect((await get(origin, '/v0/getNetworks', inGrace.key)).status).to.equal(200);
    }
  });

  it('makes a revocation effective on both processes within 5 s (NOTIFY), though they remember the key', async () => {
    const { key, id } = await createKey(t.db);
    for (const origin of origins()) expect((await get(origin, '/v0/getNetworks', key)).status).to.equal(200);
    await t.db.query(`update api_keys set revoked_at = now(), updated_at = now() where id = $1`, [id]);
    await apiKeys.announceChange(t.db, id);
    const started = Date.now();
    for (const origin of origins()) {
      await waitUntil(`${origin} to refuse the revoked key`, async () => (await get(origin, '/v0/getNetworks', key)).status === 403, 5000);
    }
    expect(Date.now() - started).to.be.below(5000);
  });

  it('writes what it counted when stopped gracefully (SIGTERM)', async () => {
    const { key, id } = await createKey(t.db);
    const last = webs.pop()!;
    for (let i = 0; i < 4; i++) expect((await get(last.origin, '/v0/getNetworks', key)).status).to.equal(200);
    await last.child.kill('SIGTERM');
    const { rows } = await t.db.query<{ n: number }>(
      `select coalesce(sum(requests), 0)::int as n from api_key_usage where api_key_id = $1`,
      [id],
    );
    expect(rows[0]!.n).to.equal(4);
  });
});

describe('API keys: plan rate and burst, quotas counted in memory', () => {
  const t = useTestDb();

  it("limits a key on a plan to the plan's rate with the burst as the bucket's capacity", async () => {
    const plan = await createPlan(t.db, 'burst', { rateLimitPerSecond: 1, burst: 2 });
    const { key } = await createKey(t.db, { planId: plan.id });
    const deps = testDeps(t.db);
    try {
      const app = createApp(deps);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await request(app).get('/v0/getNetworks').set('x-api-key', key)).status);
      expect(statuses).to.deep.equal([200, 200, 429]);
    } finally {
      await deps.services.close();
    }
  });

  it('starts the day from the usage already stored, so a restart without Redis does not reset it', async () => {
    const plan = await createPlan(t.db, 'seeded', { requestsPerDay: 10 });
    const { key, id } = await createKey(t.db, { planId: plan.id });
    const now = Date.now();
    // Seven calls answered this hour (a 4xx among them may be a refusal: not counted), as a process before the restart flushed them.
    await apiKeyUsage.addCounts(t.db, [
      { apiKeyId: id, hour: new Date(now - (now % 3_600_000)), endpoint: 'getNetworks', network: '', statusClass: 2, requests: 7 },
      { apiKeyId: id, hour: new Date(now - (now % 3_600_000)), endpoint: 'getNetworks', network: '', statusClass: 4, requests: 50 },
    ]);
    const deps = testDeps(t.db);
    try {
      const app = createApp(deps);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await request(app).get('/v0/getNetworks').set('x-api-key', key)).status);
      expect(statuses).to.deep.equal([200, 200, 200, 429]);
    } finally {
      await deps.services.close();
    }
  });

  /** Rotates a key as the operator does (the admin API), answering the new key and its id. */
  async function rotate(app: ReturnType<typeof createApp>, keyId: string): Promise<{ key: string; id: string }> {
    const res = await request(app).post(`/admin/v1/keys/${keyId}/rotate`).set('authorization', `Bearer ${ADMIN_TOKEN}`).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { key: res.body.key as string, id: res.body.apiKey.id as string };
  }

  it("shares the day's count between a key and the key it was rotated to, old key included (one customer)", async () => {
    const plan = await createPlan(t.db, 'rotated', { requestsPerDay: 5 });
    const { key: oldKey, id } = await createKey(t.db, { planId: plan.id });
    const deps = testDeps(t.db, { ADMIN_TOKEN });
    try {
      const app = createApp(deps);
      const call = async (key: string) => (await request(app).get('/v0/getNetworks').set('x-api-key', key)).status;
      const statuses = [await call(oldKey), await call(oldKey), await call(oldKey)];
      const { key: newKey } = await rotate(app, id);
      statuses.push(await call(newKey), await call(newKey), await call(newKey), await call(oldKey));
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429, 429]);
    } finally {
      await deps.services.close();
    }
  });

  it('starts a rotated key from the usage its predecessors stored, through a chain of rotations and a restart', async () => {
    const plan = await createPlan(t.db, 'rotated-twice', { requestsPerDay: 10 });
    const { id } = await createKey(t.db, { planId: plan.id });
    const admin = testDeps(t.db, { ADMIN_TOKEN });
    let second = { key: '', id: '' };
    let newest = { key: '', id: '' };
    try {
      const app = createApp(admin);
      second = await rotate(app, id);
      newest = await rotate(app, second.id);
    } finally {
      await admin.services.close();
    }
    const now = Date.now();
    const hour = new Date(now - (now % 3_600_000));
    // What processes before the restart flushed: 6 calls with the first key, 2 with the second.
    await apiKeyUsage.addCounts(t.db, [
      { apiKeyId: id, hour, endpoint: 'getNetworks', network: '', statusClass: 2, requests: 6 },
      { apiKeyId: second.id, hour, endpoint: 'getNetworks', network: '', statusClass: 2, requests: 2 },
    ]);
    const deps = testDeps(t.db);
    try {
      const app = createApp(deps);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await request(app).get('/v0/getNetworks').set('x-api-key', newest.key)).status);
      expect(statuses).to.deep.equal([200, 200, 429]);
    } finally {
      await deps.services.close();
    }
  });
});
