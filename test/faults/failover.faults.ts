/**
 * A primary failover under load: a pg_auto_failover formation (a monitor and two nodes on
 * loopback ports, test/helpers/pgAutoFailover.ts), the three processes of the Procfile running from
 * their entry points with DATABASE_URL naming both nodes (`target_session_attrs=read-write`), devnet
 * traffic arriving and the API under load. The primary is stopped at once (keeper and Postgres);
 * the monitor promotes the secondary. Then: no process exited, every process found the new primary
 * by itself (/readyz 200, the API equal to the chain, webhooks delivered), and the API answered only
 * JSON 200 or JSON 503 with Retry-After in between, never a 500. Measured: how long until the new
 * primary took writes, and until each worker was ready again; how many requests were answered 503.
 * Part of `npm run test:faults` (`--reduced`: fewer ops); skipped when pg_autoctl is not installed.
 */
import { expect } from 'chai';
import pg from 'pg';
import { startContinuous, type ContinuousTraffic } from '../../devnet/index.js';
import { createDb } from '../../shared/db/client.js';
import { migrate } from '../../shared/db/migrate.js';
import { pgAutoctl, startAutoFailover, type AutoFailoverCluster } from '../helpers/pgAutoFailover.js';
import { postgresServerBinaries } from '../helpers/pgReplica.js';
import { expectedEvents } from '../webhooks/support/expectedEvents.js';
import { startApiLoad, statusSummary } from './support/apiLoad.js';
import { apiDifference } from './support/apiTruth.js';
import { httpStatus, startProductOnDatabase, type ProductOnDatabase } from './support/productOnDatabase.js';
import { waitUntil } from './support/childProcess.js';

const REDUCED = process.argv.includes('--reduced') || process.env.FAULTS_REDUCED === '1';
const OPS = REDUCED ? 40 : 200;

describe(`PostgreSQL primary failover under load (pg_auto_failover)${REDUCED ? ' (reduced run)' : ''}`, function () {
  this.timeout(REDUCED ? 300_000 : 600_000);
  const rows: string[] = [];
  let cluster: AutoFailoverCluster;
  let product: ProductOnDatabase;
  let traffic: ContinuousTraffic | undefined;

  before(async function () {
    if (!pgAutoctl() || !postgresServerBinaries()) this.skip();
    const startedAt = Date.now();
    cluster = await startAutoFailover({ database: 'opscan' });
    rows.push(`formation (monitor + 2 nodes) up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    const databaseUrl = cluster.url();
    const db = await createDb({ databaseUrl, max: 2 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    product = await startProductOnDatabase(databaseUrl, { ops: OPS, seed: 7, name: 'failover' });
  });

  after(async () => {
    await traffic?.stop();
    await product?.stop();
    await cluster?.stop();
    console.log(`\nPrimary failover${REDUCED ? ' (reduced)' : ''}:\n${rows.map((r) => `  - ${r}`).join('\n')}`);
  });

  it('follows the new primary: no exit, only JSON 200/503, API = chain, every webhook event delivered', async () => {
    const sample = product.devnet.truth.userOps.filter((_, i) => i % 10 === 0).map((o) => `/v0/getUserOp?hash=${o.userOpHash}`);
    const load = startApiLoad({
      baseUrl: product.webUrl,
      key: product.key,
      paths: ['/v0/getLatestUserOps?network=devnet&first=10', ...sample],
    });
    traffic = startContinuous(product.devnet, { intervalMs: 700, opsPerTick: 3, seed: 11 });
    try {
      await waitUntil('answers before the failover', () => load.answers.length >= 20);
      const old = await cluster.primary();
      const fresh = 1 - old;
      const downAt = Date.now();
      await cluster.stopNode(old);

      // When the promoted node first takes a write, as a client of it alone sees it.
      let writableAt = 0;
      await waitUntil(
        'the secondary to be promoted and take writes',
        async () => {
          const c = new pg.Client({ connectionString: cluster.nodeUrl(fresh), connectionTimeoutMillis: 1_000 });
          c.on('error', () => undefined);
          try {
            await c.connect();
            await c.query('create temporary table probe (x int)');
            writableAt = Date.now();
            return true;
          } catch {
            return false;
          } finally {
            await c.end().catch(() => undefined);
          }
        },
        120_000,
      );
      const recovered: Record<string, number> = {};
      await waitUntil(
        'every process to be ready on the new primary',
        async () => {
          for (const [name, url] of Object.entries(product.readyz))
            if (!recovered[name] && (await httpStatus(url)) === 200) recovered[name] = Date.now();
          return Object.keys(recovered).length === 3;
        },
        60_000,
      );
      // Ops sent after the failover are indexed and served from the new primary.
      await new Promise((r) => setTimeout(r, 3_000));
      await traffic.stop();
      traffic = undefined;
      let difference: string | null = 'not checked';
      await waitUntil(
        'the API to equal the chain',
        async () => (difference = await apiDifference(product.webUrl, product.key, product.devnet.truth)) === null,
        120_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${difference}`);
      });
      const answers = await load.stop();
      expect(product.exits, 'processes that exited').to.deep.equal([]);
      const bad = answers.filter((a) => a.status === 0 || !a.json || (a.status >= 500 && !(a.status === 503 && a.retryAfter)));
      expect(
        bad.map((a) => `${a.status} ${a.path} ${a.error ?? ''} at +${a.at - downAt} ms`),
        'answers other than JSON 200/4xx or JSON 503 with Retry-After',
      ).to.deep.equal([]);
      const during = answers.filter((a) => a.at >= downAt);
      const unavailable = during.filter((a) => a.status === 503);
      const last503 = unavailable.length ? Math.max(...unavailable.map((a) => a.at)) - downAt : 0;
      const s = (t: number) => ((t - downAt) / 1000).toFixed(1);
      rows.push(
        `node${old + 1} (primary) stopped at once; node${fresh + 1} took writes ${s(writableAt)} s later; ready again on it: web ${s(recovered.web!)} s, indexer ${s(recovered.indexer!)} s, dispatcher ${s(recovered.dispatcher!)} s`,
        `API: ${answers.length} requests (${statusSummary(answers)}); after the stop ${unavailable.length} of ${during.length} answered 503 with Retry-After, the last ${(last503 / 1000).toFixed(1)} s after the stop; no 500`,
        `API = chain (${product.devnet.truth.userOps.length} ops, ${OPS} before the failover and the rest sent through it); no process exited`,
      );
    } catch (err) {
      rows.push(`FAILED: ${(err as Error).message.split('\n')[0]}`);
      await load.stop();
      throw err;
    }
  });

  it('delivered every webhook event', async () => {
    const expected = expectedEvents(product.devnet.truth, 'BUNDLER', product.bundler);
    const delivered = () =>
      new Set(
        product.receiver.received.map((r) => {
          const body = JSON.parse(r.body) as { type: string; data: { userOp?: { userOpHash: string }; userOpHash?: string } };
          return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
        }),
      );
    await waitUntil('every webhook event to be delivered', () => [...expected].every((e) => delivered().has(e)), 120_000).catch(
      (err: Error) => {
        rows.push(`webhooks: FAILED, ${[...expected].filter((e) => !delivered().has(e)).length} of ${expected.size} missing`);
        throw err;
      },
    );
    rows.push(`webhooks: all ${expected.size} events delivered (${product.receiver.received.length} requests)`);
    expect(product.exits, 'processes that exited').to.deep.equal([]);
  });
});
