import { expect } from 'chai';
import request from 'supertest';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { AppRouter } from '../../server/trpc/router.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import { hashApiKey } from '../../shared/apiKeys.js';
import { networkMapSchema } from '../../shared/models/index.js';
import { useTestDb } from '../helpers/db.js';
import { createTestApp, createTestKey } from '../helpers/app.js';

describe('getNetworks and API-key authentication', () => {
  const t = useTestDb();
  let key: string;

  before(async () => {
    key = await createTestKey(t.db);
  });

  it('answers /healthz without a key', async () => {
    const res = await request(createTestApp(t.db)).get('/healthz');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('answers the networks this deployment indexes, in the spec map shape, to a valid key', async () => {
    const res = await request(createTestApp(t.db)).get('/v0/getNetworks').set('x-api-key', key);
    expect(res.status).to.equal(200);
    expect(networkMapSchema.parse(res.body)).to.deep.equal({ '31337': 'devnet' });
  });

  it('lists every indexed network with its chain id, by canonical name, in both dialects', async () => {
    const app = createTestApp(t.db, { NETWORKS: 'devnet, baseSepolia,OP Mainnet' });
    const expected = { '31337': 'devnet', '84532': 'base-sepolia', '10': 'optimism' };
    for (const base of ['/v0', '/jiffyscan/v0']) {
      const res = await request(app).get(`${base}/getNetworks`).set('x-api-key', key);
      expect(res.status, base).to.equal(200);
      expect(res.body, base).to.deep.equal(expected);
    }
    // Each name it answers is one the network parameter accepts.
    for (const name of Object.values(expected)) {
      const res = await request(app).get('/v0/getLatestUserOps').query({ network: name }).set('x-api-key', key);
      expect(res.status, name).to.equal(200);
    }
  });

  it('is 401 with a JSON error when the key is missing', async () => {
    const res = await request(createTestApp(t.db)).get('/v0/getNetworks');
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ code: 'UNAUTHORIZED', param: 'x-api-key' });
    expect(res.body.message).to.be.a('string');
  });

  it('is 403 "Invalid API Key" for an unknown key', async () => {
    const res = await request(createTestApp(t.db)).get('/v0/getNetworks').set('x-api-key', 'ops_unknown');
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ message: 'Invalid API Key', code: 'FORBIDDEN', param: 'x-api-key' });
  });

  it('is 403 for a revoked key', async () => {
    const revokedKey = await createTestKey(t.db, 'to-revoke');
    const found = await apiKeys.findByHash(t.db, hashApiKey(revokedKey));
    await apiKeys.revokeByPrefix(t.db, found!.prefix);
    const res = await request(createTestApp(t.db)).get('/v0/getNetworks').set('x-api-key', revokedKey);
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('FORBIDDEN');
  });

  it('accepts the key as HTTP Basic credentials (the spec BasicAuth scheme)', async () => {
    const basic = Buffer.from(`user:${key}`).toString('base64');
    const ok = await request(createTestApp(t.db)).get('/v0/getNetworks').set('authorization', `Basic ${basic}`);
    expect(ok.status).to.equal(200);
    const bad = Buffer.from('user:wrong').toString('base64');
    const denied = await request(createTestApp(t.db)).get('/v0/getNetworks').set('authorization', `Basic ${bad}`);
    expect(denied.status).to.equal(403);
  });

  it('answers a browser preflight without a key', async () => {
    const res = await request(createTestApp(t.db))
      .options('/v0/getNetworks')
      .set('origin', 'https://explorer.example')
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'x-api-key');
    expect(res.status).to.be.within(200, 204);
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    expect(res.headers['access-control-allow-headers']).to.include('x-api-key');
  });

  it('answers unknown paths with a JSON 404', async () => {
    const res = await request(createTestApp(t.db)).get('/v0/noSuchEndpoint').set('x-api-key', key);
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
  });

  describe('over tRPC', () => {
    let server: Server;
    let url: string;
    before(async () => {
      server = createTestApp(t.db).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trpc`;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    it('returns the same body as REST', async () => {
      const client = createTRPCClient<AppRouter>({ links: [httpLink({ url, headers: { 'x-api-key': key } })] });
      const viaTrpc = await client.getNetworks.query({});
      const viaRest = await request(createTestApp(t.db)).get('/v0/getNetworks').set('x-api-key', key);
      expect(viaTrpc).to.deep.equal(viaRest.body);
    });

    it('rejects a missing key with the same code and status', async () => {
      const client = createTRPCClient<AppRouter>({ links: [httpLink({ url })] });
      try {
        await client.getNetworks.query({});
        expect.fail('expected an error');
      } catch (error) {
        const data = (error as { data?: { code?: string; httpStatus?: number } }).data;
        expect(data?.code).to.equal('UNAUTHORIZED');
        expect(data?.httpStatus).to.equal(401);
      }
    });
  });
});
