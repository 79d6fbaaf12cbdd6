/** getPrices: keyless, every expected symbol always present, values from a local HTTP price source. */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { z } from 'zod';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { useTestRedis } from '../helpers/redis.js';

const EXPLORER_SYMBOLS = ['ETH', 'MATIC', 'FUSE', 'BNB', 'AVAX', 'FTM', 'VANRY', 'MON', 'OP'];
const pricesBody = z.record(z.string(), z.number().nullable());

describe('getPrices', () => {
  const t = useTestDb();
  const redis = useTestRedis();
  let source: Server;
  let sourceUrl: string;
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  let sourceRequests = 0;
  const opened: Deps[] = [];

  before(async () => {
    source = createServer((_req, res) => {
      sourceRequests++;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => source.once('listening', resolve));
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/prices`;
  });
  after(async () => {
    await Promise.all(opened.map((d) => d.services.close()));
    await new Promise((resolve) => source.close(resolve));
  });

  /** An app over its own services (its own price memo), serving devnet and gnosis (native XDAI). */
  function app(env: Record<string, string> = {}) {
    const deps = testDeps(t.db, {
      NETWORKS: 'devnet,gnosis',
      REDIS_KEY_PREFIX: `${redis.prefix}${opened.length}:`,
      ...(redis.url ? { REDIS_URL: redis.url } : {}),
      ...env,
    });
    opened.push(deps);
    return request(createApp(deps));
  }

  it("answers null for every expected symbol without a price source, keyless and with the explorer's placeholder key", async () => {
    const api = app();
    for (const req of [api.get('/v0/getPrices'), api.get('/v0/getPrices').set('x-api-key', 'TestAPIKeyDontUseInCode')]) {
      const res = await req;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const prices = pricesBody.parse(res.body);
      expect(Object.keys(prices)).to.include.members([...EXPLORER_SYMBOLS, 'XDAI']);
      expect(Object.values(prices).every((p) => p === null)).to.equal(true);
    }
  });

  it("answers the source's prices by upper-case symbol, extra symbols included, null where it has none", async () => {
    answer = { status: 200, body: { eth: 3120.5, MATIC: 0.51, xdai: 1, DOGE: 0.12, junk: 'x', inf: null } };
    const res = await app({ PRICE_SOURCE_URL: sourceUrl }).get('/v0/getPrices');
    expect(res.status).to.equal(200);
    const prices = pricesBody.parse(res.body);
    expect(prices).to.include({ ETH: 3120.5, MATIC: 0.51, XDAI: 1, DOGE: 0.12, BNB: null, OP: null, VANRY: null, MON: null });
    expect(prices).to.not.have.any.keys('JUNK', 'INF', 'junk');
  });

  it('reads the source at most once a minute, however many calls', async () => {
    answer = { status: 200, body: { ETH: 2000 } };
    const api = app({ PRICE_SOURCE_URL: sourceUrl });
    const before = sourceRequests;
    const bodies = await Promise.all(Array.from({ length: 5 }, () => api.get('/v0/getPrices')));
    await new Promise((resolve) => setTimeout(resolve, 1300)); // past the cache entry's ~1 s TTL (±10 %)
    bodies.push(await api.get('/v0/getPrices'));
    expect(bodies.map((r) => r.body.ETH)).to.deep.equal([2000, 2000, 2000, 2000, 2000, 2000]);
    expect(sourceRequests - before).to.equal(1);
  });

  it('answers nulls while the source fails and nothing was read before', async () => {
    answer = { status: 500, body: { message: 'down' } };
    const res = await app({ PRICE_SOURCE_URL: sourceUrl }).get('/v0/getPrices');
    expect(res.status).to.equal(200);
    expect(pricesBody.parse(res.body)).to.include({ ETH: null, XDAI: null });
  });

  it('answers nulls when the source is unreachable (a closed port)', async () => {
    const res = await app({ PRICE_SOURCE_URL: 'http://127.0.0.1:9/prices' }).get('/v0/getPrices');
    expect(res.status).to.equal(200);
    expect(pricesBody.parse(res.body).ETH).to.equal(null);
  });
});
