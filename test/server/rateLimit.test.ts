import { expect } from 'chai';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import type { AppRouter } from '../../server/trpc/router.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { TEST_REDIS_URL, useTestRedis } from '../helpers/redis.js';

/** A request costs one point; a key limited to N/s may make N, plus a burst reserve of 2N, at once. */
const burstOf = (perSecond: number) => perSecond * 3;

describe('per-key rate limits', () => {
  const t = useTestDb();
  const redis = useTestRedis();
  const opened: Deps[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((deps) => deps.services.close()));
  });
  const appWith = async (env: Record<string, string> = {}) => {
    const deps = testDeps(t.db, env);
    opened.push(deps);
    await deps.services.ready();
    return createApp(deps);
  };
  const call = (app: ReturnType<typeof createApp>, key: string) => request(app).get('/v0/getNetworks').set('x-api-key', key);

  const limiters: Array<[string, () => Record<string, string>]> = [['in-process', () => ({})]];
  if (TEST_REDIS_URL)
    limiters.push(['redis', () => ({ REDIS_URL: TEST_REDIS_URL!, REDIS_KEY_PREFIX: `${redis.prefix}${Math.random()}:` })]);

  for (const [name, env] of limiters) {
    describe(`with the ${name} limiter`, () => {
      it("answers 429 JSON with Retry-After and RateLimit headers past the key's own limit", async () => {
        const key = await createTestKey(t.db, 'slow', 2);
        const app = await appWith(env());
        const ok = await call(app, key);
        expect(ok.status).to.equal(200);
        expect(ok.headers['ratelimit-policy']).to.equal('"default";q=2;w=1');
        expect(ok.headers['ratelimit']).to.match(/^"default";r=\d+;t=\d+$/);
        const statuses = [200];
        for (let i = 1; i < burstOf(2) + 2; i++) statuses.push((await call(app, key)).status);
        expect(statuses.slice(0, burstOf(2))).to.deep.equal(Array(burstOf(2)).fill(200));
        const refused = await call(app, key);
        expect(refused.status).to.equal(429);
        expect(refused.body).to.include({ code: 'TOO_MANY_REQUESTS' });
        expect(refused.body.message).to.be.a('string');
        expect(Number(refused.headers['retry-after'])).to.be.within(1, 10);
        expect(refused.headers['ratelimit']).to.match(/^"default";r=0;t=\d+$/);
      });

      it('uses RATE_LIMIT_PER_SECOND for keys without their own limit, and counts keys apart', async () => {
        const app = await appWith({ ...env(), RATE_LIMIT_PER_SECOND: '1' });
        const [a, b] = [await createTestKey(t.db, 'a'), await createTestKey(t.db, 'b')];
        // Calls until refused: the burst, plus at most one refill per second the calls took (a
        // loaded machine may take longer than a second over them).
        const started = Date.now();
        let admitted = 0;
        while (admitted <= burstOf(1) + 30 && (await call(app, a)).status === 200) admitted++;
        const refills = Math.ceil((Date.now() - started) / 1000);
        expect(admitted).to.be.within(burstOf(1), burstOf(1) + refills);
        expect((await call(app, b)).status).to.equal(200);
      });
    });
  }

  it('shares the counters of a key between web processes through Redis', async function () {
    if (!TEST_REDIS_URL) this.skip();
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `${redis.prefix}shared:` };
    const [one, two] = [await appWith(env), await appWith(env)];
    const key = await createTestKey(t.db, 'shared', 1);
    for (let i = 0; i < burstOf(1); i++) expect((await call(i % 2 ? one : two, key)).status).to.equal(200);
    expect((await call(one, key)).status).to.equal(429);
    expect((await call(two, key)).status).to.equal(429);
  });

  it('holds a key to its limit across two web processes under concurrent load, though each admits from leases', async function () {
    if (!TEST_REDIS_URL) this.skip();
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `${redis.prefix}leases:` };
    const [one, two] = [await appWith(env), await appWith(env)];
    const perSecond = 200;
    const key = await createTestKey(t.db, 'busy', perSecond);
    const started = Date.now();
    const statuses = await Promise.all(Array.from({ length: 1600 }, (_, i) => call(i % 2 ? one : two, key).then((r) => r.status)));
    const seconds = (Date.now() - started) / 1000;
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).to.deep.equal([]);
    // The whole burst is available, and no more than the bucket plus what refilled meanwhile
    // (and one lease per process: a tenth of a second's rate each).
    expect(admitted).to.be.at.least(burstOf(perSecond));
    expect(admitted).to.be.at.most(burstOf(perSecond) + Math.ceil(perSecond * seconds) + 2 * perSecond * 0.1);
  });

  it('keeps limiting in memory when Redis is down', async () => {
    const app = await appWith({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: redis.prefix });
    const key = await createTestKey(t.db, 'insured', 1);
    for (let i = 0; i < burstOf(1); i++) expect((await call(app, key)).status).to.equal(200);
    expect((await call(app, key)).status).to.equal(429);
  });

  it('limits keyless calls (searchEntry) per client address', async () => {
    const app = await appWith({ RATE_LIMIT_PER_SECOND: '1' });
    const statuses: number[] = [];
    for (let i = 0; i < burstOf(1) + 1; i++) statuses.push((await request(app).get('/v0/searchEntry').query({ entry: '12' })).status);
    expect(statuses.slice(0, burstOf(1)).every((s) => s === 404)).to.equal(true);
    expect(statuses.at(-1)).to.equal(429);
  });

  it('counts every procedure of a tRPC batch', async () => {
    const key = await createTestKey(t.db, 'batch', 1);
    const server: Server = (await appWith()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trpc`;
      const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url, headers: { 'x-api-key': key } })] });
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => client.getNetworks.query({})));
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(burstOf(1));
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(refused).to.have.length(6 - burstOf(1));
      expect(refused[0]!.reason.data).to.include({ code: 'TOO_MANY_REQUESTS', httpStatus: 429 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
