/**
 * During a database outage the web process answers 503 to each request. The outage is
 * logged once as it starts and once as it ends; the 503s are counted in /metrics
 * (opscan_http_database_unavailable_total), not each logged at error level (at 30 requests/s that
 * would be some 300 error lines in 10 s). PostgreSQL sits behind a TCP proxy the test cuts.
 */
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { register } from 'prom-client';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import { createWebServices } from '../../server/services.js';
import { createDb, type Db } from '../../shared/db/client.js';
import { createTestKey, testConfig } from '../helpers/app.js';
import { TEST_DATABASE_URL, useTestDb } from '../helpers/db.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';

const OUTAGE_REQUESTS = 12;

async function unavailableAnswers(): Promise<number> {
  const metric = register.getSingleMetric('opscan_http_database_unavailable_total');
  expect(metric, 'opscan_http_database_unavailable_total in /metrics').to.not.equal(undefined);
  return (await metric!.get()).values[0]?.value ?? 0;
}

describe('web process during a database outage: one log line per outage, the 503s counted', function () {
  this.timeout(60_000);
  const t = useTestDb();
  let proxy: TcpProxy;
  let db: Db;
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);

  before(async function () {
    if (!TEST_DATABASE_URL) this.skip(); // PGlite is in-process: there is no connection to cut
    const target = new URL(t.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `127.0.0.1:${proxy.port}`;
    db = await createDb({ databaseUrl: target.toString(), max: 4, connectTimeoutMs: 1000, log });
  });
  after(async () => {
    await db?.close();
    await proxy?.close();
  });

  it('answers 503 with Retry-After on both transports, logs the outage once and no error, and counts each answer', async () => {
    const key = await createTestKey(t.db, 'outage');
    const config = testConfig();
    const services = createWebServices({ db, config, log });
    const app = createApp({ db, config, log, services });
    try {
      // A new page size each call: no answer comes from the response cache.
      const calls = [
        (first: number) => request(app).get('/v0/getLatestUserOps').query({ network: 'devnet', first }).set('x-api-key', key),
        (first: number) =>
          request(app)
            .get('/trpc/getLatestUserOps')
            .query({ input: JSON.stringify({ network: 'devnet', first }) })
            .set('x-api-key', key),
      ];
      expect((await calls[0]!(1)).status).to.equal(200);
      const before = await unavailableAnswers();

      proxy.cut();
      for (let i = 0; i < OUTAGE_REQUESTS; i++) {
        const res = await calls[i % 2]!(i + 2);
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.headers['retry-after']).to.equal('5');
      }
      expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).to.deep.equal([]);
      expect(lines.filter((l) => l.msg === 'database unavailable; retrying until it is back')).to.have.length(1);
      expect((await unavailableAnswers()) - before).to.equal(OUTAGE_REQUESTS);

      proxy.restore();
      expect((await calls[1]!(OUTAGE_REQUESTS + 2)).status).to.equal(200);
      expect(lines.filter((l) => l.msg === 'database available again')).to.have.length(1);
    } finally {
      await services.close();
    }
  });
});
