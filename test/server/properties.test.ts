import { expect } from 'chai';
import fc from 'fast-check';
import request from 'supertest';
import { z } from 'zod';
import { createApp } from '../../server/app.js';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import { endpoints, type EndpointName } from '../../server/endpoints/index.js';
import { checkWebhookUrl } from '../../shared/webhookUrls.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { sampleInputs } from './support/sampleInputs.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

/**
 * Property tests over every endpoint of the registry (a new endpoint is covered by itself) and each
 * of its parameters, on REST and tRPC: whatever one parameter holds, with the others valid, the
 * answer is a JSON 200, or a JSON 4xx — a 400 naming that very parameter, a 404 or a 409. Never a
 * 5xx, never a non-JSON body, never a hang. GraphQL variables likewise get data or GraphQL errors.
 */

const RUNS = Number(process.env.PROPERTY_RUNS ?? 12);
const REQUEST_TIMEOUT_MS = 10_000;

/** Strings a hostile or careless caller sends. */
const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    'a\u0000b',
    '\u0000',
    '\ud800',
    'x\udfffy',
    'undefined',
    'null',
    'NaN',
    '-1',
    '1e309',
    '0x',
    '0X' + 'F'.repeat(40),
    '9'.repeat(400),
    '-9007199254740993',
    '1.5',
    "' OR 1=1 --",
    '"; drop table user_ops; --',
    '${process.exit(1)}',
    '<script>alert(1)</script>',
    '__proto__',
    'constructor',
    '../../etc/passwd',
    '%00',
    'x'.repeat(5000),
    '０ｘ１２',
    '٣',
  ),
);

/** JSON values (tRPC takes any JSON, not only strings). */
const hostileJson = fc.oneof(
  hostileString,
  fc.integer(),
  fc.constantFrom(-1, 1e308, -1e308, 2 ** 53 + 2, 0.5, -0, Number.MAX_SAFE_INTEGER),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'a'), fc.string(), { maxKeys: 2 }),
);

type Answer = { status: number; json: boolean; param?: unknown; code?: unknown };

/** Requests sent, by transport and status: printed at the end, as the run's figures. */
const tally = new Map<string, number>();
const count = (transport: string, status: number) => tally.set(`${transport} ${status}`, (tally.get(`${transport} ${status}`) ?? 0) + 1);

function expectFineAnswer(answer: Answer, param: string, what: string): void {
  expect(answer.json, `${what}: a JSON body`).to.equal(true);
  expect(answer.status, `${what}: no 5xx`).to.be.lessThan(500);
  expect([200, 400, 404, 409], `${what}: status`).to.include(answer.status);
  if (answer.status === 400) expect(answer.param, `${what}: the 400 names the parameter`).to.equal(param);
}

describe('properties: any parameter value gets a JSON 200 or a 4xx naming it', function () {
  this.timeout(600_000);
  const d = useIndexedDevnet({ ops: 40 });
  let key = '';
  let app: ReturnType<typeof createApp>;
  let samples: Record<string, Record<string, string>>;

  before(async () => {
    const deps = testDeps(d.db, {
      RPC_URL_DEVNET: d.devnet.rpcUrl,
      RATE_LIMIT_PER_SECOND: '1000000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_MAX_PER_KEY: '100000',
    });
    app = createApp(deps);
    key = await createTestKey(d.db, 'properties', 1_000_000);
    const op = d.truth.userOps[0]!;
    samples = {
      ...sampleInputs(d.truth),
      createWebhook: {
        webhookUrl: 'http://127.0.0.1:9/hook',
        filter: 'ADDRESS',
        identifier: op.sender,
        chainId: String(d.truth.chainId),
        apiName: 'prop',
      },
      deleteWebhook: { id: 'wh_00000000000000000000000000' },
      testWebhook: { id: 'wh_00000000000000000000000000' },
      replayWebhookDelivery: { id: 'msg_00000000000000000000000000' },
    };
  });

  after(() => {
    const rows = [...tally].sort().map(([k, n]) => ({ transport: k.split(' ')[0], status: Number(k.split(' ')[1]), requests: n }));
    console.log(`\n  hostile parameter values: ${RUNS} per parameter and transport`);
    console.table(rows);
  });

  const all = Object.entries(endpoints) as Array<[EndpointName, Endpoint]>;

  it('has a valid sample input for every endpoint', () => {
    expect(all.map(([name]) => name).filter((name) => !samples[name])).to.deep.equal([]);
  });

  for (const [name, endpoint] of all) {
    const params = endpoint.input instanceof z.ZodObject ? Object.keys(endpoint.input.shape) : [];
    const method = (endpoint.methods ?? ['GET'])[0]!;

    it(`${name}: every parameter over REST (${params.join(', ') || 'none'})`, async () => {
      for (const param of params) {
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(hostileString, fc.array(hostileString, { minLength: 2, maxLength: 3 }), fc.constant(undefined)),
            async (value) => {
              const query: Record<string, unknown> = { ...samples[name] };
              if (value === undefined) delete query[param];
              else query[param] = value;
              const call =
                method === 'DELETE'
                  ? request(app).delete(`/v0/${name}`)
                  : method === 'POST'
                    ? request(app).post(`/v0/${name}`)
                    : request(app).get(`/v0/${name}`);
              const res = await call.query(query).set('x-api-key', key).timeout(REQUEST_TIMEOUT_MS);
              count('REST', res.status);
              expectFineAnswer(
                { status: res.status, json: /^application\/json/.test(res.headers['content-type'] ?? ''), param: res.body?.param },
                param,
                `${name} ${param}=${JSON.stringify(value)?.slice(0, 80)}`,
              );
            },
          ),
          { numRuns: RUNS },
        );
      }
    });

    it(`${name}: every parameter over tRPC`, async () => {
      const mutation = endpoint.kind === 'mutation';
      for (const param of params) {
        await fc.assert(
          fc.asyncProperty(fc.oneof(hostileJson, fc.constant(undefined)), async (value) => {
            const input: Record<string, unknown> = { ...samples[name] };
            if (value === undefined) delete input[param];
            else input[param] = value;
            const res = await (
              mutation
                ? request(app).post(`/trpc/${name}`).set('content-type', 'application/json').send(JSON.stringify(input))
                : request(app)
                    .get(`/trpc/${name}`)
                    .query({ input: JSON.stringify(input) })
            )
              .set('x-api-key', key)
              .timeout(REQUEST_TIMEOUT_MS);
            count('tRPC', res.status);
            const data = res.body?.error?.data;
            expectFineAnswer(
              { status: res.status, json: /^application\/json/.test(res.headers['content-type'] ?? ''), param: data?.param },
              param,
              `trpc ${name} ${param}=${JSON.stringify(value)?.slice(0, 80)}`,
            );
          }),
          { numRuns: RUNS },
        );
      }
    });
  }

  it('answers any GraphQL variable value with data or GraphQL errors, never a 5xx', async () => {
    const op = d.truth.userOps[0]!;
    const queries: Array<[string, Record<string, unknown>]> = [
      [
        'query GetUserOpHash($userOpHash: Bytes) { userOps(where: {userOpHash: $userOpHash}) { userOpHash transactionHash } }',
        { userOpHash: op.userOpHash },
      ],
      [
        'query A($address: Bytes, $first: Int, $skip: Int, $start: BigInt) { userOps(first: $first, skip: $skip, where: {and: [{sender: $address}, {blockNumber_gte: $start}]}) { id } }',
        { address: op.sender, first: 5, skip: 0, start: '0' },
      ],
      [
        'query B($ids: [Bytes!], $dir: OrderDirection) { userOps(where: {userOpHash_in: $ids}, orderDirection: $dir, orderBy: blockNumber) { id } }',
        { ids: [op.userOpHash], dir: 'desc' },
      ],
    ];
    for (const [query, valid] of queries) {
      for (const variable of Object.keys(valid)) {
        await fc.assert(
          fc.asyncProperty(fc.oneof(hostileJson, fc.constant(undefined)), async (value) => {
            const variables: Record<string, unknown> = { ...valid };
            if (value === undefined) delete variables[variable];
            else variables[variable] = value;
            const res = await request(app)
              .post('/subgraphs/name/devnet')
              .set('x-api-key', key)
              .send({ query, variables })
              .timeout(REQUEST_TIMEOUT_MS);
            count('GraphQL', res.status);
            const what = `GraphQL $${variable}=${JSON.stringify(value)?.slice(0, 80)}`;
            expect(res.status, what).to.be.lessThan(500);
            expect(res.headers['content-type'] ?? '', what).to.match(/json/);
            expect(res.body.data !== undefined || Array.isArray(res.body.errors), `${what}: data or errors`).to.equal(true);
            if (res.body.errors) expect(res.body.errors[0].message, what).to.be.a('string');
          }),
          { numRuns: RUNS },
        );
      }
    }
  });

  it('ignores prototype-pollution and unknown parameters', async () => {
    for (const [name] of all.filter(([, e]) => (e.methods ?? ['GET'])[0] === 'GET')) {
      await request(app).get(`/v0/${name}`).query(samples[name]!).set('x-api-key', key);
      // Asked again: a request that creates something (createWebhook) answers a repeat with 409,
      // whether or not an earlier test happened to create the same thing first.
      const valid = await request(app).get(`/v0/${name}`).query(samples[name]!).set('x-api-key', key);
      const polluted = await request(app)
        .get(`/v0/${name}?__proto__[x]=1&constructor[prototype][y]=2&__proto__=z&unknownParam=1`)
        .query(samples[name]!)
        .set('x-api-key', key);
      expect(polluted.status, name).to.equal(valid.status);
      expect(({} as Record<string, unknown>).x).to.equal(undefined);
    }
  });
});

describe('properties: webhook URLs never reach a private address, however it is spelled', () => {
  /** An IPv4 address as 4 octets, in one of the spellings URL parsers and resolvers accept. */
  const spell = (o: number[], how: number): string => {
    const n = ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!;
    const hex = (v: number) => v.toString(16);
    switch (how) {
      case 0:
        return o.join('.');
      case 1:
        return String(n); // decimal
      case 2:
        return o.map((x) => `0${x.toString(8)}`).join('.'); // octal
      case 3:
        return `0x${hex(n)}`; // hex
      case 4:
        return `${o[0]}.${(o[1]! << 16) + (o[2]! << 8) + o[3]!}`; // short a.b
      case 5:
        return `[::ffff:${o.join('.')}]`; // IPv4-mapped
      case 6:
        return `[::${o.join('.')}]`; // IPv4-compatible
      case 7:
        return `[64:ff9b::${o.join('.')}]`; // NAT64
      case 8:
        return `[::ffff:${hex((o[0]! << 8) + o[1]!)}:${hex((o[2]! << 8) + o[3]!)}]`; // mapped, hex groups
      default:
        return `[2002:${hex((o[0]! << 8) + o[1]!)}:${hex((o[2]! << 8) + o[3]!)}::1]`; // 6to4
    }
  };
  const octet = fc.integer({ min: 0, max: 255 });
  const privateIpv4 = fc.oneof(
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
    fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
    fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), octet, octet),
    fc.tuple(fc.constant(0), octet, octet, octet),
  );

  it('refuses every spelling of loopback, private, link-local, CGNAT and metadata addresses', async () => {
    await fc.assert(
      fc.asyncProperty(privateIpv4, fc.integer({ min: 0, max: 9 }), fc.constantFrom('', ':443', ':8080'), async (octets, how, port) => {
        const url = `https://${spell(octets, how)}${port}/hook`;
        const verdict = await checkWebhookUrl(url, { allowPrivate: false, resolve: async () => ['93.184.216.34'] });
        expect(verdict.ok, url).to.equal(false);
      }),
      { numRuns: 400 },
    );
  });

  it('refuses names resolving to such addresses, and accepts public ones', async () => {
    await fc.assert(
      fc.asyncProperty(privateIpv4, async (octets) => {
        const verdict = await checkWebhookUrl('https://hooks.example.com/x', {
          allowPrivate: false,
          resolve: async () => ['8.8.8.8', octets.join('.')],
        });
        expect(verdict.ok).to.equal(false);
      }),
      { numRuns: 100 },
    );
    expect(
      (await checkWebhookUrl('https://hooks.example.com/x', { allowPrivate: false, resolve: async () => ['93.184.216.34'] })).ok,
    ).to.equal(true);
  });
});
