import { expect } from 'chai';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { inferRouterError, inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { http } from 'viem';
import { createBundlerClient } from 'viem/account-abstraction';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { apiFile, generateClientTypes, standaloneDiagnostics } from '../../client/scripts/generateTypes.js';
import { createOpscanClient, OpscanError, type EndpointName, type InputOf, type OutputOf } from '../../client/src/index.js';
import { ENDPOINT_METHODS } from '../../client/src/rest.js';
import type { AppRouter } from '../../client/src/trpc.js';
import { createApp } from '../../server/app.js';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import {
  endpoints,
  type EndpointName as ServerEndpointName,
  type Endpoints,
  type OutputOf as ServerOutputOf,
} from '../../server/endpoints/index.js';
import type { AppRouter as ServerAppRouter } from '../../server/trpc/router.js';
import { createTestKey } from '../helpers/app.js';
import { sampleInputs } from '../server/support/sampleInputs.js';
import { useIndexedDevnet } from '../server/support/indexedDevnet.js';

// The client's types, spelled out in client/src/api.ts, are the server's: checked by `npm run typecheck`.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const typesAgree: [
  Equal<EndpointName, ServerEndpointName>,
  Equal<{ [K in EndpointName]: OutputOf<K> }, { [K in ServerEndpointName]: ServerOutputOf<K> }>,
  Equal<{ [K in EndpointName]: InputOf<K> }, { [K in ServerEndpointName]: z.input<Endpoints[K]['input']> }>,
  Equal<inferRouterInputs<AppRouter>, inferRouterInputs<ServerAppRouter>>,
  Equal<inferRouterOutputs<AppRouter>, inferRouterOutputs<ServerAppRouter>>,
  Equal<inferRouterError<AppRouter>, inferRouterError<ServerAppRouter>>,
  Equal<AppRouter['_def']['record']['getUserOp']['_def']['type'], ServerAppRouter['_def']['record']['getUserOp']['_def']['type']>,
  Equal<AppRouter['_def']['record']['createWebhook']['_def']['type'], ServerAppRouter['_def']['record']['createWebhook']['_def']['type']>,
] = [true, true, true, true, true, true, true, true];

describe('opscan/client types', () => {
  it("client/src/api.ts is what the server's schemas generate, and compiles with nothing but the ES lib", async function () {
    this.timeout(120_000);
    expect(typesAgree).to.not.include(false);
    expect(await readFile(apiFile, 'utf8'), 'stale: run `npm run generate -w @opscan/client`').to.equal(await generateClientTypes());
    expect(standaloneDiagnostics()).to.deep.equal([]);
  });
});

/** Listens on 127.0.0.1 and answers the base URL. */
async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What a call throws, as an OpscanError. */
async function refusal(call: Promise<unknown>): Promise<OpscanError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(OpscanError);
  return error as OpscanError;
}

describe('opscan/client against a running server', () => {
  const d = useIndexedDevnet({ ops: 120, seed: 29 });
  let server: Server;
  let url: string;

  before(async () => {
    server = createServer(createApp(d.deps));
    url = await listen(server);
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const client = (apiKey = d.key) => createOpscanClient({ url, apiKey });

  it('calls each /v0 query endpoint and answers what REST answers (or throws what it refuses)', async () => {
    const samples = sampleInputs(d.truth);
    const queries = (Object.entries(endpoints) as Array<[EndpointName, Endpoint]>).filter(([, e]) => e.kind !== 'mutation');
    for (const [name] of queries) {
      const input = samples[name]!;
      const call = client().v0[name] as (input: object) => Promise<unknown>;
      const rest = await d.get(name, input);
      if (rest.status === 200) {
        expect(await call(input), name).to.deep.equal(rest.body);
      } else {
        // A sample about something that does not exist (a webhook of another key): the same refusal.
        const error = await refusal(call(input));
        expect([error.status, error.code, error.message], name).to.deep.equal([rest.status, rest.body.code, rest.body.message]);
      }
    }
  });

  it("rpcUrl(network) is the network's ERC-4337 RPC, key included: viem's bundler client reads an op through it", async () => {
    const op = d.truth.userOps[0]!;
    const bundler = createBundlerClient({ transport: http(client().rpcUrl('devnet')) });
    const receipt = await bundler.getUserOperationReceipt({ hash: op.userOpHash as `0x${string}` });
    expect([receipt.userOpHash, receipt.receipt.transactionHash]).to.deep.equal([op.userOpHash, op.transactionHash]);
    expect(client().rpcUrl('devnet')).to.equal(`${url}/rpc/devnet?apikey=${encodeURIComponent(d.key)}`);
  });

  it('sends every endpoint with a method the server takes for it', () => {
    for (const [name, endpoint] of Object.entries(endpoints) as Array<[EndpointName, Endpoint]>) {
      expect(endpoint.methods ?? ['GET'], name).to.include(ENDPOINT_METHODS[name] ?? 'GET');
    }
  });

  it('creates, lists and deletes a webhook, typed, and reports refusals as OpscanError', async () => {
    const { v0 } = client();
    const created = await v0.createWebhook({
      webhookUrl: 'https://93.184.215.14/hooks/opscan',
      filter: 'PAYMASTER',
      identifier: d.truth.userOps.find((o) => o.paymaster)!.paymaster!,
      chainId: String(d.truth.chainId),
      apiName: 'client-test',
    });
    expect(created.webhook.secret).to.match(/^whsec_/);
    expect((await v0.listWebhooks({})).webhooks.map((w) => w.id)).to.include(created.webhook.id);
    expect((await v0.getWebhookDeliveries({ id: created.webhook.id })).deliveries).to.be.an('array');
    expect(await v0.deleteWebhook({ id: created.webhook.id })).to.deep.equal({ success: true });
    const gone = await refusal(v0.deleteWebhook({ id: created.webhook.id }));
    expect([gone.status, gone.code]).to.deep.equal([404, 'NOT_FOUND']);
    const replay = await refusal(v0.replayWebhookDelivery({ id: 'msg_01JDF3Q8M4X2ZK7Y9T0V5W6R1S' }));
    expect(replay.status).to.equal(404);
  });

  it('throws 4xx answers as OpscanError with status, code, message and parameter', async () => {
    const bad = await refusal(client().v0.getLatestUserOps({ network: 'atlantis' }));
    expect(bad).to.deep.include({ status: 400, code: 'BAD_REQUEST', param: 'network' });
    expect(bad.message).to.match(/unknown network "atlantis"/);
    expect(bad.kind).to.equal('api');
    // @ts-expect-error -- beyond the page size's typed bound (1 to 100), to see the server refuse it too
    const badFirst = await refusal(client().v0.getLatestUserOps({ network: 'devnet', first: 1000 }));
    expect(badFirst).to.deep.include({ kind: 'api', status: 400, param: 'first' });
    const forbidden = await refusal(client('ops_not_a_key').v0.getNetworks({}));
    expect(forbidden).to.deep.include({ status: 403, code: 'FORBIDDEN', message: 'Invalid API Key' });
    const missing = await refusal(client().v0.getFactoryDetails({ factory: `0x${'6'.repeat(40)}`, network: 'devnet' }));
    expect([missing.status, missing.code]).to.deep.equal([404, 'NOT_FOUND']);
    const subgraph = await refusal(client().getNetworkStatus('atlantis'));
    expect([subgraph.status, subgraph.code]).to.deep.equal([404, 'NOT_FOUND']);
  });

  it("throws a 429 with the server's Retry-After once its retries are spent", async () => {
    const limited = createOpscanClient({ url, apiKey: await createTestKey(d.db, 'client-429', 1), maxRetries: 0 });
    let error: OpscanError | undefined;
    for (let i = 0; i < 10 && !error; i++)
      error = await limited.v0.getNetworks({}).then(
        () => undefined,
        (e: OpscanError) => e,
      );
    expect(error).to.be.instanceOf(OpscanError);
    expect(error).to.deep.include({ status: 429, code: 'TOO_MANY_REQUESTS' });
    expect(error!.retryAfter).to.be.within(1, 10);
  });

  it('retries a 429 after Retry-After, a bounded number of times', async () => {
    let requests = 0;
    let refuseFirst = 0;
    const stub = createServer((_req, res) => {
      requests++;
      if (requests <= refuseFirst) {
        res
          .writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' })
          .end('{"message":"slow down","code":"TOO_MANY_REQUESTS"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"1":"mainnet"}');
      }
    });
    const stubUrl = await listen(stub);
    try {
      refuseFirst = 2;
      const started = Date.now();
      expect(await createOpscanClient({ url: stubUrl, apiKey: 'k', maxRetries: 2 }).v0.getNetworks({})).to.deep.equal({ 1: 'mainnet' });
      expect([requests, Date.now() - started >= 2000]).to.deep.equal([3, true]);
      requests = 0;
      refuseFirst = 5;
      const error = await refusal(createOpscanClient({ url: stubUrl, apiKey: 'k', maxRetries: 1 }).v0.getNetworks({}));
      expect([error.status, error.retryAfter, error.message, requests]).to.deep.equal([429, 1, 'slow down', 2]);
      requests = 0;
      const tooLong = await refusal(createOpscanClient({ url: stubUrl, apiKey: 'k', maxRetryAfterSeconds: 0 }).v0.getNetworks({}));
      expect([tooLong.status, requests]).to.deep.equal([429, 1]);
    } finally {
      await new Promise((resolve) => stub.close(resolve));
    }
  });

  it("answers any query of a network's subgraph with graphql(), and its errors as kind api", async () => {
    const latest = [...d.truth.userOps].sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex)[0]!;
    const data = await createOpscanClient<'devnet'>({ url, apiKey: d.key }).graphql<{ userOps: Array<{ userOpHash: string }> }>(
      'devnet',
      'query Latest($first: Int) { userOps(first: $first, orderBy: blockNumber, orderDirection: desc) { userOpHash } }',
      { first: 1 },
    );
    expect(data.userOps.map((o) => o.userOpHash)).to.deep.equal([latest.userOpHash]);
    const wrong = await refusal(client().graphql('devnet', '{ userOps { noSuchField } }'));
    expect(wrong).to.deep.include({ kind: 'api', code: 'GRAPHQL' });
    expect(wrong.message).to.include('noSuchField');
  });

  it('types a tRPC client with AppRouter', async () => {
    const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: { 'x-api-key': d.key } })] });
    const status = await trpc.getNetworkStatus.query({ network: 'devnet' });
    expect(status.indexedBlock).to.equal((await client().v0.getNetworkStatus({ network: 'devnet' })).indexedBlock);
  });
});

describe('opscan/client never hangs, and fails with one error type', function () {
  // Each call below ends by the client's own bound (at most 1 s); the test's timeout only catches a hang.
  this.timeout(20_000);
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  /** A server answering with `handler`, closed (with its connections) after the tests. */
  async function stub(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const server = createServer(handler);
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    servers.push(server);
    return listen(server);
  }
  after(async () => {
    sockets.forEach((socket) => socket.destroy());
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('times out a server that accepts and never answers, or never finishes its answer: kind timeout', async () => {
    const silent = await stub(() => {});
    const error = await refusal(createOpscanClient({ url: silent, apiKey: 'k', timeoutMs: 300 }).v0.getNetworks({}));
    expect(error).to.deep.include({ kind: 'timeout', code: 'TIMEOUT', status: undefined });
    expect(error.message).to.equal('No answer within 300 ms');
    // The default bound is the client's; a call may set its own.
    const perCall = await refusal(createOpscanClient({ url: silent, apiKey: 'k' }).getNetworkStatus('devnet', { timeoutMs: 200 }));
    expect(perCall).to.deep.include({ kind: 'timeout', message: 'No answer within 200 ms' });
    const stalled = await stub((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"1":');
    });
    expect(await refusal(createOpscanClient({ url: stalled, apiKey: 'k', timeoutMs: 300 }).v0.getNetworks({}))).to.deep.include({
      kind: 'timeout',
    });
  });

  it('times out even with a fetch that never settles and ignores the signal', async () => {
    const never = () => new Promise<never>(() => {});
    const error = await refusal(
      createOpscanClient({ url: 'http://opscan.invalid', apiKey: 'k', timeoutMs: 200, fetch: never }).v0.getNetworks({}),
    );
    expect(error.kind).to.equal('timeout');
  });

  it('reports a refused connection as kind network, naming the reason', async () => {
    const closed = createServer();
    const gone = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const error = await refusal(createOpscanClient({ url: gone, apiKey: 'k' }).v0.getNetworks({}));
    expect(error).to.deep.include({ kind: 'network', code: 'NETWORK', status: undefined });
    expect(error.message).to.include(gone).and.include('ECONNREFUSED');
    expect(error.cause).to.be.instanceOf(Error);
  });

  it('rejects at once when the caller aborts, before or during a call: kind aborted, the reason as cause', async () => {
    let arrived: () => void = () => {};
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const silent = await stub(() => arrived());
    // A client whose own timeout is far beyond the test's: only the abort can end these calls.
    const opscan = createOpscanClient({ url: silent, apiKey: 'k', timeoutMs: 600_000 });
    const controller = new AbortController();
    const pending = refusal(opscan.v0.getNetworks({}, { signal: controller.signal }));
    await requestArrived;
    controller.abort(new Error('user left the page'));
    const error = await pending;
    expect(error).to.deep.include({ kind: 'aborted', code: 'ABORTED' });
    expect((error.cause as Error).message).to.equal('user left the page');
    const before = await refusal(opscan.graphql('devnet', '{ _meta { deployment } }', {}, { signal: AbortSignal.abort() }));
    expect(before.kind).to.equal('aborted');
  });

  it("reports a status without opscan's error body as kind http, and opscan's refusal as kind api with code and parameter", async () => {
    const url = await stub((req, res) => {
      if (req.url!.startsWith('/v0/getNetworks')) res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>');
      else if (req.url!.startsWith('/v0/getLatestUserOps'))
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"message":"Invalid parameter \\"first\\": must be an integer from 1 to 100","code":"BAD_REQUEST","param":"first"}');
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a page, not opscan</html>');
    });
    const opscan = createOpscanClient({ url, apiKey: 'k' });
    const http = await refusal(opscan.v0.getNetworks({}));
    expect(http).to.deep.include({ kind: 'http', status: 500, code: 'HTTP_500', param: undefined });
    expect(http.message).to.include('Internal Server Error');
    const api = await refusal(opscan.v0.getLatestUserOps({ first: 5 }));
    expect(api).to.deep.include({ kind: 'api', status: 400, code: 'BAD_REQUEST', param: 'first' });
    const notJson = await refusal(opscan.v0.getPrices({}));
    expect(notJson).to.deep.include({ kind: 'http', status: 200 });
  });
});
