import { expect } from 'chai';
import { z } from 'zod';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import { endpoints } from '../../server/endpoints/index.js';
import { sampleInputs } from './support/sampleInputs.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

/**
 * Every parameter of every API endpoint, given bad values one at a time (the others valid), must be
 * a 400 JSON error naming that parameter: never a 500, never an answer.
 */

const INJECTIONS = [
  "' OR 1=1 --",
  "0x'; drop table user_ops; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x/a}',
  '../../etc/passwd',
  '%00',
  '\u0000',
  'undefined',
  'null',
  '',
  ' ',
];
const NUMBERS = ['-1', 'NaN', 'Infinity', '1e3', '1.5', '0x10', '99999999999999999999999', '9007199254740993', '2147483648000'];
const HEX = [
  '0x',
  '0x1234',
  `0x${'a'.repeat(39)}`,
  `0x${'a'.repeat(41)}`,
  `0x${'a'.repeat(63)}`,
  `0x${'g'.repeat(64)}`,
  `0x${'a'.repeat(5000)}`,
];
const NETWORKS = ['nowhere', 'fallback', 'mainnet', 'devnet2', 'x'.repeat(65)];

const own = (Object.entries(endpoints) as Array<[string, Endpoint]>).filter(([, e]) => e.tag !== 'Webhook');

function badValuesFor(param: string): string[] {
  if (param === 'network') return [...NETWORKS, ...INJECTIONS.slice(0, 6)];
  return [...INJECTIONS, ...NUMBERS, ...HEX];
}

function shapeOf(endpoint: Endpoint): Record<string, z.ZodType> {
  return endpoint.input instanceof z.ZodObject ? endpoint.input.shape : {};
}

describe('bad parameter values', () => {
  const d = useIndexedDevnet({ ops: 40 });

  const expectRejected = (res: { status: number; body: Record<string, unknown> }, param: string, what: string) => {
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
    expect(res.body.code, what).to.equal('BAD_REQUEST');
    expect(res.body.param, what).to.equal(param);
    expect(res.body.message, what).to.be.a('string').and.include(param);
  };

  for (const [name, endpoint] of own) {
    describe(name, () => {
      for (const [param, schema] of Object.entries(shapeOf(endpoint))) {
        it(`rejects bad "${param}" values with a 400 naming it`, async function () {
          this.timeout(120_000);
          const valid = sampleInputs(d.truth)[name]!;
          for (const value of badValuesFor(param)) {
            const res = await d.get(name, { ...valid, [param]: value });
            const what = `${name} ${param}=${JSON.stringify(value).slice(0, 40)}`;
            // Every network value here is unknown or not served; other values may be well-formed
            // (a far block number): those must simply not break anything.
            if (param === 'network' || !schema.safeParse(value).success) expectRejected(res, param, what);
            else expect(res.status, what).to.be.oneOf([200, 404]);
          }
          // A repeated parameter arrives as an array.
          expectRejected(await d.get(name, { ...valid, [param]: ['1', '2'] }), param, `${name} ${param} repeated`);
          if (!schema.safeParse(undefined).success) {
            const { [param]: _, ...without } = valid;
            expectRejected(await d.get(name, without), param, `${name} without ${param}`);
          }
        });
      }

      it('rejects values of the wrong JSON type over tRPC', async () => {
        const valid = sampleInputs(d.truth)[name]!;
        for (const param of Object.keys(shapeOf(endpoint))) {
          for (const value of [{ a: 1 }, true, 12.5, -3, [1]]) {
            const input = encodeURIComponent(JSON.stringify({ ...valid, [param]: value }));
            const res = await d.api().get(`/trpc/${name}?input=${input}`).set('x-api-key', d.key);
            expect(res.status, `${name} ${param}=${JSON.stringify(value)}`).to.equal(400);
            expect(res.body.error.data).to.include({ code: 'BAD_REQUEST', param });
          }
        }
      });
    });
  }

  it('names the networks it serves when the network is unknown or not indexed', async () => {
    for (const network of ['nowhere', 'mainnet']) {
      const res = await d.get('getLatestUserOps', { network });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include('devnet');
      expect(res.body.validNetworks).to.deep.equal(['devnet']);
    }
  });

  it('requires one of blockNumber, block or address on getBlockActivity', async () => {
    const res = await d.get('getBlockActivity', { network: 'devnet' });
    expectRejected(res, 'blockNumber', 'getBlockActivity without a block');
    for (const alias of ['block', 'address']) {
      const ok = await d.get('getBlockActivity', { network: 'devnet', [alias]: String(d.truth.userOps[0]!.blockNumber) });
      expect(ok.status).to.equal(200);
      expect(ok.body.block.userOps.length).to.be.greaterThan(0);
    }
  });

  it('requires logIndex (or the SDK spelling logIndec) on getLogFromIndex', async () => {
    const transfer = d.truth.transfers.find((t) => t.logIndex !== null)!;
    const base = { transactionHash: transfer.transactionHash, network: 'devnet' };
    expectRejected(await d.get('getLogFromIndex', base), 'logIndex', 'without logIndex');
    const viaTypo = await d.get('getLogFromIndex', { ...base, logIndec: String(transfer.logIndex) });
    expect(viaTypo.status).to.equal(200);
    expect(viaTypo.body.log.logIndex).to.equal(String(transfer.logIndex));
  });

  it('ignores parameters it does not know (clients send extras such as limit)', async () => {
    const res = await d.get('getLatestUserOps', { network: 'devnet', limit: 'x', first: '2' });
    expect(res.status).to.equal(200);
    expect(res.body.userOps).to.have.length(2);
  });
});
