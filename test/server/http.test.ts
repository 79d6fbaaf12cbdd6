import { expect } from 'chai';
import request from 'supertest';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import { endpoints } from '../../server/endpoints/index.js';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';

type Json = Record<string, unknown>;

describe('HTTP edges: keys, CORS, OpenAPI and docs', () => {
  const t = useTestDb();
  let deps: Deps;
  let key: string;
  before(async () => {
    deps = testDeps(t.db, { RATE_LIMIT_PER_SECOND: '100000' });
    key = await createTestKey(t.db);
  });
  after(() => deps.services.close());
  const api = () => request(createApp(deps));

  it('asks for a key before it looks at the parameters: 401 without one, 403 with a wrong one', async () => {
    const missing = await api().get('/v0/getLatestUserOps').query({ network: 'nowhere', first: 'NaN' });
    expect(missing.status).to.equal(401);
    expect(missing.body).to.include({ code: 'UNAUTHORIZED', param: 'x-api-key' });
    const wrong = await api().get('/v0/getLatestUserOps').query({ network: 'nowhere' }).set('x-api-key', 'ops_nope');
    expect(wrong.status).to.equal(403);
    expect(wrong.body).to.include({ message: 'Invalid API Key', code: 'FORBIDDEN' });
  });

  it('answers searchEntry and its preflight without a key, with CORS headers', async () => {
    const res = await api().get('/v0/searchEntry').query({ entry: '12' }).set('origin', 'https://explorer.example');
    expect(res.status).to.equal(404);
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    const preflight = await api()
      .options('/v0/getLatestUserOps?network=base&first=10&skip=0')
      .set('origin', 'https://explorer.example')
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'x-api-key');
    expect(preflight.status).to.be.within(200, 204);
    expect(preflight.headers['access-control-allow-headers']).to.include('x-api-key');
    const answer = await api()
      .get('/v0/getNetworkStatus')
      .query({ network: 'devnet' })
      .set('x-api-key', key)
      .set('origin', 'https://x.example');
    expect(answer.headers['access-control-allow-origin']).to.equal('*');
    expect(answer.headers['access-control-expose-headers']).to.include('ratelimit');
  });

  it('accepts the endpoint names in any case (older explorers sent GetDailyMetrics)', async () => {
    const res = await api().get('/v0/GetDailyMetrics').query({ network: 'devnet' }).set('x-api-key', key);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ metrics: [] });
  });

  it('answers lists with no match as 200 and an empty list', async () => {
    const lists: Array<[string, Json, string]> = [
      ['getLatestUserOps', { network: 'devnet' }, 'userOps'],
      ['getLatestBundles', { network: 'devnet' }, 'bundles'],
      ['getTopPaymasters', { network: 'devnet' }, 'paymasters'],
      ['getTopFactories', {}, 'factories'],
      ['getTopModules', { network: 'devnet' }, 'modules'],
      ['getDailyMetrics', { network: 'devnet' }, 'metrics'],
    ];
    for (const [name, query, envelope] of lists) {
      const res = await api().get(`/v0/${name}`).query(query).set('x-api-key', key);
      expect(res.status, name).to.equal(200);
      expect(res.body[envelope], name).to.deep.equal([]);
    }
    const network = await api().get('/v0/getNetworkStatus').query({ network: 'devnet' }).set('x-api-key', key);
    expect(network.body).to.deep.include({ indexedBlock: 0, backfillComplete: false });
  });

  describe('GET /v0/openapi.json', () => {
    let doc: Json;
    before(async () => {
      const res = await api().get('/v0/openapi.json');
      expect(res.status).to.equal(200);
      doc = res.body;
    });

    it('is an OpenAPI 3.1 document of every endpoint with its parameters', () => {
      expect(doc.openapi).to.equal('3.1.0');
      const paths = doc.paths as Record<string, Record<string, Json>>;
      for (const [name, endpoint] of Object.entries(endpoints) as Array<[string, Endpoint]>) {
        const operation = paths[`/${name}`]?.[(endpoint.methods?.[0] ?? 'GET').toLowerCase()];
        expect(operation, name).to.be.an('object');
        expect(operation!.operationId).to.equal(name);
        const params = (operation!.parameters as Json[]).map((p) => p.name);
        const shape = (endpoint.input as unknown as { shape?: Json }).shape ?? {};
        expect(params, name).to.have.members(Object.keys(shape));
        expect(Object.keys(operation!.responses as Json)).to.include.members(['200', '400', '401', '403']);
      }
      const latest = paths['/getLatestUserOps']!.get!;
      const first = (latest.parameters as Json[]).find((p) => p.name === 'first')!;
      expect(first).to.deep.include({ in: 'query', required: false });
      expect(first.schema).to.deep.include({ type: 'integer', minimum: 1, maximum: 100 });
      // Optional (the deployment's default network), and documented as such.
      const network = (latest.parameters as Json[]).find((p) => p.name === 'network')!;
      expect(network).to.deep.include({ required: false });
      expect(network.description).to.include('DEFAULT_NETWORK');
      expect(paths['/searchEntry']!.get!.security).to.deep.equal([]);
    });

    it('resolves every schema reference to a component', () => {
      const components = (doc.components as { schemas: Json }).schemas;
      const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
      expect(refs.length).to.be.greaterThan(20);
      for (const ref of refs) expect(components, ref).to.have.property(ref);
      expect(components).to.include.keys('UserOp', 'Bundle', 'DailyMetric', 'Transaction', 'Balance', 'Error');
      expect(JSON.stringify(doc)).to.not.include('#/$defs/');
    });

    it('says the spec wins on the address endpoints answered as arrays, and that prices may be null', () => {
      const paths = doc.paths as Record<string, Record<string, Json>>;
      for (const name of ['getAddressTransactions', 'getAddressNFTTransfers', 'getAddressBalances', 'getAddressERC20Transfers']) {
        expect(paths[`/${name}`]!.get!.description, name).to.include('spec wins');
        expect(
          (paths[`/${name}`]!.get!.responses as Record<string, { content: { 'application/json': { schema: Json } } }>)['200']!.content[
            'application/json'
          ].schema.type,
        ).to.equal('array');
      }
      expect((doc.info as Json).description).to.include('PRICE_SOURCE_URL');
    });
  });

  it('renders the API reference at /docs', async () => {
    const res = await api().get('/docs/');
    expect(res.status).to.equal(200);
    expect(res.text).to.include('swagger-ui');
  });
});
