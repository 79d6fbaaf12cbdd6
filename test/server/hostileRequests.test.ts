import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { createDb, isDatabaseUnavailable, type Db } from '../../shared/db/client.js';
import { createApp } from '../../server/app.js';
import { closeServer, startWeb } from '../../server/web.js';
import { createLogger } from '../../shared/log.js';
import type { Deps } from '../../server/context.js';
import { DISCARD_MAX_BYTES, MAX_BODY_BYTES, MAX_JSON_DEPTH, MAX_TRPC_BATCH, jsonNestsDeeperThan } from '../../server/http/requestGuards.js';
import { createTestKey, testConfig, testDeps } from '../helpers/app.js';
import { createTestDatabase, TEST_DATABASE_URL, useTestDb, type TestDatabase } from '../helpers/db.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';

/** Requests probing found that are easy to answer with a 500 or a non-JSON body: each gets a JSON error. */

const run = promisify(execFile);
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('hostile requests and a failing database', () => {
  describe('a database that cannot be reached answers JSON 503 with Retry-After, and recovers by itself', () => {
    let database: TestDatabase;
    let proxy: TcpProxy;
    let db: Db;
    let deps: Deps;
    let key: string;
    let page = 0;
    // A new page each call: a cached answer would not touch the database.
    const latest = () =>
      request(createApp(deps))
        .get('/v0/getLatestUserOps')
        .query({ network: 'devnet', skip: String(page++) })
        .set('x-api-key', key);

    before(async function () {
      if (!TEST_DATABASE_URL) this.skip(); // needs a server whose connections can be cut (PGlite is in-process)
      database = await createTestDatabase();
      key = await createTestKey(database.db, 'outage', 1_000_000);
      const url = new URL(database.url!);
      proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      url.host = `127.0.0.1:${proxy.port}`;
      db = await createDb({ databaseUrl: url.toString(), max: 3, connectTimeoutMs: 2000 });
      deps = testDeps(db, { RATE_LIMIT_PER_SECOND: '1000000' });
    });
    after(async () => {
      await deps?.services.close();
      await db?.close();
      await proxy?.close();
      await database?.drop();
    });

    it('answers 200 while connected, 503 while cut (REST and tRPC, known and new keys), 200 once restored', async () => {
      expect((await latest()).status).to.equal(200);
      proxy.cut();
      for (let i = 0; i < 3; i++) {
        const res = await latest();
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.headers['content-type']).to.match(/^application\/json/);
        expect(res.headers['retry-after']).to.equal('5');
        expect(res.body).to.include({ code: 'SERVICE_UNAVAILABLE' });
      }
      const trpc = await request(createApp(deps))
        .get('/trpc/getLatestUserOps')
        .query({ input: JSON.stringify({ network: 'devnet', skip: 99 }) })
        .set('x-api-key', key);
      expect(trpc.status).to.equal(503);
      expect(trpc.headers['retry-after']).to.equal('5');
      expect(trpc.body.error.data).to.include({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503 });
      // A key not seen before must be looked up: the outage is a 503 too, not a 403.
      const unknownKey = await request(createApp(deps))
        .get('/v0/getLatestUserOps')
        .query({ network: 'devnet' })
        .set('x-api-key', 'ops_notcachedyet0000000000000000000000');
      expect(unknownKey.status).to.equal(503);

      proxy.restore();
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (Date.now() < deadline && (status = (await latest()).status) !== 200) await new Promise((r) => setTimeout(r, 200));
      expect(status).to.equal(200);
    });
  });

  it('tells an unreachable database from a wrong query', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const e of [
      coded('ECONNREFUSED'),
      coded('57P01'),
      coded('57P03'),
      coded('08006'),
      coded('25006'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(isDatabaseUnavailable(e), e.message + (e as { code?: string }).code).to.equal(true);
    }
    for (const e of [coded('42P01'), coded('23505'), coded('22P02'), new Error('syntax error'), 'ECONNREFUSED']) {
      expect(isDatabaseUnavailable(e)).to.equal(false);
    }
  });

  describe('malformed requests', () => {
    const t = useTestDb();
    let deps: Deps;
    let key: string;
    before(async () => {
      deps = testDeps(t.db, { RATE_LIMIT_PER_SECOND: '1000000', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
      key = await createTestKey(t.db, 'hostile', 1_000_000);
    });
    after(() => deps.services.close());
    const api = () => request(createApp(deps));

    it('refuses a NUL byte in every free-text parameter with a 400 naming it (REST)', async () => {
      const cases: Array<[string, request.Test, string]> = [
        ['deleteWebhook id', api().delete('/v0/deleteWebhook?id=a%00b'), 'id'],
        ['getWebhookDeliveries id', api().get('/v0/getWebhookDeliveries?id=a%00b'), 'id'],
        ['testWebhook id', api().post('/v0/testWebhook?id=wh_%00'), 'id'],
        ['replayWebhookDelivery id', api().post('/v0/replayWebhookDelivery?id=msg_%00'), 'id'],
        [
          'createWebhook apiName',
          api()
            .post('/v0/createWebhook')
            .send({
              webhookUrl: 'https://example.com/h',
              filter: 'ADDRESS',
              identifier: '0x' + '1'.repeat(40),
              chainId: 31337,
              apiName: 'a\u0000b',
            }),
          'apiName',
        ],
        [
          'createWebhook webhookUrl',
          api()
            .post('/v0/createWebhook')
            .send({
              webhookUrl: 'https://example.com/\u0000',
              filter: 'ADDRESS',
              identifier: '0x' + '1'.repeat(40),
              chainId: 31337,
              apiName: 'n',
            }),
          'webhookUrl',
        ],
        ['a query parameter', api().get('/v0/getLatestUserOps?network=dev%00net'), 'network'],
      ];
      for (const [what, call, param] of cases) {
        const res = await call.set('x-api-key', key);
        expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body, what).to.include({ code: 'BAD_REQUEST', param });
      }
    });

    it('refuses NUL and unpaired surrogates over tRPC with a 400 naming the parameter', async () => {
      for (const [procedure, input, param] of [
        ['deleteWebhook', { id: 'a\u0000b' }, 'id'],
        [
          'createWebhook',
          {
            webhookUrl: 'https://example.com/h',
            filter: 'ADDRESS',
            identifier: '0x' + '1'.repeat(40),
            chainId: 31337,
            apiName: 'x\ud800y',
          },
          'apiName',
        ],
        ['getWebhookDeliveries', { id: '\udc00' }, 'id'],
      ] as const) {
        const call =
          procedure === 'getWebhookDeliveries'
            ? api()
                .get(`/trpc/${procedure}`)
                .query({ input: JSON.stringify(input) })
            : api().post(`/trpc/${procedure}`).set('content-type', 'application/json').send(JSON.stringify(input));
        const res = await call.set('x-api-key', key);
        expect(res.status, `${procedure}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error.data, procedure).to.include({ code: 'BAD_REQUEST', param });
      }
    });

    it('refuses JSON nested thousands deep with a JSON 400, over tRPC (body and query) and REST', async () => {
      const deep = `{"id":${nested(5000)}}`;
      expect(deep.length).to.be.greaterThan(10_000);
      const trpcBody = await api().post('/trpc/deleteWebhook').set('x-api-key', key).set('content-type', 'application/json').send(deep);
      const trpcQuery = await api()
        .get('/trpc/getWebhookDeliveries')
        .query({ input: `{"id":${nested(2000)}}` })
        .set('x-api-key', key);
      const rest = await api().post('/v0/createWebhook').set('x-api-key', key).set('content-type', 'application/json').send(deep);
      for (const res of [trpcBody, trpcQuery, rest]) {
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.headers['content-type']).to.match(/^application\/json/);
      }
      expect(trpcQuery.body.error.data).to.include({ code: 'BAD_REQUEST', param: 'input' });
      // Nesting within the bound still parses (and then fails validation on its own terms).
      const shallow = await api()
        .post('/trpc/deleteWebhook')
        .set('x-api-key', key)
        .set('content-type', 'application/json')
        .send(`{"id":${nested(MAX_JSON_DEPTH - 1)}}`);
      expect(shallow.status).to.equal(400);
      expect(shallow.body.error.data).to.include({ param: 'id' });
    });

    it("answers a tRPC batch over the limit with a JSON 400 in tRPC's error shape", async () => {
      const batch = (n: number) =>
        api()
          .get(`/trpc/${Array.from({ length: n }, () => 'getNetworks').join(',')}`)
          .query({ batch: '1', input: JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, {}]))) })
          .set('x-api-key', key);
      const over = await batch(MAX_TRPC_BATCH + 1);
      expect(over.status).to.equal(400);
      expect(over.headers['content-type']).to.match(/^application\/json/);
      expect(over.body.error.data).to.include({ code: 'BAD_REQUEST', httpStatus: 400, param: 'batch' });
      const full = await batch(MAX_TRPC_BATCH);
      expect(full.status).to.equal(200);
      expect(full.body).to.have.length(MAX_TRPC_BATCH);
    });

    it('answers a body over the size limit with a JSON 413 on every route, whatever its type', async () => {
      const big = JSON.stringify({ apiName: 'x'.repeat(70_000) });
      for (const path of [
        '/v0/createWebhook',
        '/jiffyscan/v0/createWebhook',
        '/trpc/createWebhook',
        '/subgraphs/name/devnet',
        '/v0/getNetworks',
        '/nowhere',
      ]) {
        for (const type of ['application/json', 'text/plain', 'application/octet-stream']) {
          const res = await api().post(path).set('x-api-key', key).set('content-type', type).send(big);
          const what = `${path} ${type}`;
          expect(res.status, what).to.equal(413);
          expect(res.headers['content-type'], what).to.match(/^application\/json/);
          const code = path.startsWith('/trpc')
            ? res.body.error.data.code
            : path.startsWith('/subgraphs')
              ? res.body.errors[0].extensions.code
              : res.body.code;
          expect(code, what).to.equal('PAYLOAD_TOO_LARGE');
        }
      }
    });

    it('answers a tRPC call whose body is not JSON with a JSON 415', async () => {
      for (const type of ['text/plain', 'application/octet-stream', 'multipart/form-data; boundary=x']) {
        const res = await api().post('/trpc/deleteWebhook').set('x-api-key', key).set('content-type', type).send('id=wh_1');
        expect(res.status, type).to.equal(415);
        expect(res.headers['content-type'], type).to.match(/^application\/json/);
        expect(res.body.error.data, type).to.include({ code: 'UNSUPPORTED_MEDIA_TYPE' });
      }
    });
  });

  describe('slow clients', () => {
    const t = useTestDb();
    let server: Server;
    let port = 0;
    let key = '';
    before(async () => {
      key = await createTestKey(t.db, 'slow', 1_000_000);
      server = await startWeb(
        { db: t.db, config: testConfig({ RATE_LIMIT_PER_SECOND: '1000000' }), log: createLogger({ level: 'silent', name: 'slow' }) },
        0,
      );
      port = (server.address() as AddressInfo).port;
    });
    after(() => closeServer(server));

    it('keeps answering normal requests while hundreds of connections dribble their headers', async () => {
      expect(server.requestTimeout, 'a whole request must arrive within a bound').to.be.within(1, 60_000);
      expect(server.headersTimeout).to.be.greaterThan(0);
      const slow: net.Socket[] = [];
      for (let i = 0; i < 300; i++) {
        const socket = net.connect(port, '127.0.0.1');
        socket.on('error', () => {});
        socket.write('GET /v0/getNetworks HTTP/1.1\r\nHost: x\r\n');
        slow.push(socket);
      }
      const drip = setInterval(() => slow.forEach((s) => s.writable && s.write('X-Slow: 1\r\n')), 200);
      try {
        const started = Date.now();
        const answers = await Promise.all(
          Array.from({ length: 50 }, () =>
            fetch(`http://127.0.0.1:${port}/v0/getNetworks`, { headers: { 'x-api-key': key } }).then((r) => r.status),
          ),
        );
        expect(answers.every((s) => s === 200)).to.equal(true);
        expect(Date.now() - started, 'answered without waiting for the slow ones').to.be.lessThan(10_000);
      } finally {
        clearInterval(drip);
        slow.forEach((s) => s.destroy());
      }
    });
  });

  describe('oversized requests read back by a client in another process', () => {
    const t = useTestDb();
    let server: Server;
    let port = 0;
    before(async () => {
      server = await startWeb({ db: t.db, config: testConfig(), log: createLogger({ level: 'silent', name: 'oversized' }) }, 0);
      port = (server.address() as AddressInfo).port;
    });
    after(() => closeServer(server));

    /**
     * Node's http client in a process of its own (in this process client and server would take
     * turns on one event loop, and the race never shows): each request writes all it has, then
     * prints what it read back, or the socket error that replaced the answer.
     */
    async function fromAnotherProcess(
      requests: Array<{ path: string; method?: string; bodyBytes?: number; pieceBytes?: number; headerBytes?: number; close?: boolean }>,
    ): Promise<string[]> {
      const script = `
        import http from 'node:http';
        const [port, requests] = [Number(process.argv[1]), JSON.parse(process.argv[2])];
        for (const r of requests) {
          const body = r.bodyBytes ? Buffer.alloc(r.bodyBytes, 'a') : undefined;
          const headers = { 'content-type': 'application/json', ...(body ? { 'content-length': body.length } : {}) };
          if (r.headerBytes) headers['x-big'] = 'a'.repeat(r.headerBytes);
          if (r.close) headers.connection = 'close';
          console.log(await new Promise((resolve) => {
            const method = r.method ?? (body ? 'POST' : 'GET');
            const req = http.request({ host: '127.0.0.1', port, path: r.path, method, headers }, (res) => {
              let text = '';
              res.on('data', (c) => (text += c));
              res.on('end', () => resolve(res.statusCode + ' ' + (res.headers['content-type'] ?? '') + ' ' + text));
            });
            req.on('error', (e) => resolve('error ' + e.code));
            if (!r.pieceBytes) return req.end(body);
            // As SDKs send a body: piece by piece, each when the socket has taken the one before.
            let at = 0;
            const pump = () => {
              while (at < body.length) {
                const piece = body.subarray(at, (at += r.pieceBytes));
                if (at >= body.length) return req.end(piece);
                if (!req.write(piece)) return req.once('drain', pump);
              }
            };
            pump();
          }));
        }`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, String(port), JSON.stringify(requests)]);
      return stdout.trim().split('\n');
    }

    it('answers a 10 MB body with a JSON 413 that the sender reads (the rest is read and dropped)', async () => {
      const answers = await fromAnotherProcess(
        Array.from({ length: 8 }, (_, i) => ({ path: i % 2 ? '/trpc/createWebhook' : '/v0/createWebhook', bodyBytes: 10 * 1024 * 1024 })),
      );
      for (const answer of answers) expect(answer).to.match(/^413 application\/json.*PAYLOAD_TOO_LARGE/);
    });

    it('answers a 10 MB body written in 64 KB pieces with a JSON 413 naming the limit, on every route and method', async () => {
      const routes = [
        { path: '/v0/createWebhook', method: 'POST' },
        { path: '/jiffyscan/v0/createWebhook', method: 'POST' },
        { path: '/trpc/createWebhook', method: 'POST' },
        { path: '/trpc/createWebhook,deleteWebhook?batch=1', method: 'POST' },
        { path: '/v0/deleteWebhook', method: 'DELETE' },
        { path: '/trpc/deleteWebhook', method: 'POST' },
        { path: '/subgraphs/name/devnet', method: 'POST' },
        { path: '/admin/v1/keys', method: 'POST' },
        { path: '/v0/getNetworks', method: 'GET' },
        { path: '/nowhere', method: 'PUT' },
        { path: '/nowhere', method: 'PATCH' },
      ];
      // Sent on a kept-alive connection and on one the client asks to close (an agent without keep-alive, Node 18's default).
      const sent = [false, true].flatMap((close) =>
        routes.map((r) => ({ ...r, close, bodyBytes: 10 * 1024 * 1024, pieceBytes: 64 * 1024 })),
      );
      const answers = await fromAnotherProcess(sent);
      answers.forEach((answer, i) => {
        const what = `${sent[i]!.method} ${sent[i]!.path}${sent[i]!.close ? ' (connection: close)' : ''}`;
        expect(answer, what).to.match(/^413 application\/json.*PAYLOAD_TOO_LARGE/);
        expect(answer, what).to.include(`larger than ${MAX_BODY_BYTES / 1024} KB`);
      });
    });

    it('answers headers over the limit with a JSON 431 that the sender reads', async () => {
      const answers = await fromAnotherProcess(
        [20 * 1024, 1024 * 1024, 1024 * 1024, 4 * 1024 * 1024].map((headerBytes) => ({ path: '/v0/getNetworks', headerBytes })),
      );
      for (const answer of answers) expect(answer).to.match(/^431 application\/json.*REQUEST_HEADER_FIELDS_TOO_LARGE/);
    });

    it('cuts off a sender of more than DISCARD_MAX_BYTES', async () => {
      const [answer] = await fromAnotherProcess([{ path: '/v0/createWebhook', bodyBytes: DISCARD_MAX_BYTES + 8 * 1024 * 1024 }]);
      // What it reads depends on timing (the 413, or the reset of the cut); the server is not held.
      expect(answer).to.match(/^(413 |error E)/);
    });
  });

  it('measures JSON nesting without parsing, ignoring brackets inside strings', () => {
    expect(jsonNestsDeeperThan(nested(3), 3)).to.equal(false);
    expect(jsonNestsDeeperThan(nested(4), 3)).to.equal(true);
    expect(jsonNestsDeeperThan(`["${'['.repeat(100)}"]`, 1)).to.equal(false);
    expect(jsonNestsDeeperThan(`["\\"${'{'.repeat(100)}"]`, 1)).to.equal(false);
    expect(jsonNestsDeeperThan(`[[],[],[[]]]`, 2)).to.equal(true);
  });
});
