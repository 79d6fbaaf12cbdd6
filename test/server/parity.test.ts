import { expect } from 'chai';
import type { TRPCClientError } from '@trpc/client';
import { createTRPCClient, httpBatchLink, httpLink } from '@trpc/client';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import { endpoints } from '../../server/endpoints/index.js';
import type { AppRouter } from '../../server/trpc/router.js';
import { useListeningApp } from '../helpers/app.js';
import { sampleInputs } from './support/sampleInputs.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

/** tRPC input of a REST query: the same values, numbers as numbers (what a typed client sends). */
function asTrpcInput(query: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, /^\d+$/.test(v) && !['entry'].includes(k) ? Number(v) : v]));
}

const queries = (Object.entries(endpoints) as Array<[string, Endpoint]>).filter(([, e]) => e.kind !== 'mutation');

describe('REST and tRPC parity', () => {
  const d = useIndexedDevnet({ ops: 120 });
  const listening = useListeningApp(() => d.deps);
  const trpcUrl = () => `${listening.origin}/trpc`;

  it('has a sample input for every query endpoint', () => {
    const samples = sampleInputs(d.truth);
    expect(queries.map(([name]) => name).filter((name) => !(name in samples))).to.deep.equal([]);
  });

  for (const [name, endpoint] of queries) {
    it(`${name}: the REST body equals the tRPC result`, async () => {
      const query = sampleInputs(d.truth)[name]!;
      const rest = await d.get(name, query);
      if (name !== 'getWebhookDeliveries') {
        expect(rest.status, JSON.stringify(rest.body)).to.equal(200);
        endpoint.output.parse(rest.body);
      }
      const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: trpcUrl(), headers: { 'x-api-key': d.key } })] });
      const procedure = (client as unknown as Record<string, { query(input: unknown): Promise<unknown> }>)[name]!;
      for (const input of [query, asTrpcInput(query)]) {
        if (rest.status === 200) {
          expect(await procedure.query(input)).to.deep.equal(rest.body);
        } else {
          const error = await procedure.query(input).then(
            () => expect.fail(`tRPC answered where REST said ${rest.status}`),
            (e: unknown) => e as TRPCClientError<AppRouter>,
          );
          expect(error.data).to.include({ code: rest.body.code, httpStatus: rest.status });
          expect(error.message).to.equal(rest.body.message);
        }
      }
    });
  }

  it('answers every call of a tRPC batch', async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: trpcUrl(), headers: { 'x-api-key': d.key } })] });
    const [latest, status] = await Promise.all([
      client.getLatestUserOps.query({ network: 'devnet', first: 2 }),
      client.getNetworkStatus.query({ network: 'devnet' }),
    ]);
    expect(latest.userOps).to.have.length(2);
    expect(status.network).to.equal('devnet');
  });
});
