/**
 * PostgreSQL restarted and crashed under load, with the three processes of the Procfile
 * running from their entry points (web, indexer, dispatcher) on a private PostgreSQL server this
 * suite starts (the shared one is never touched), devnet traffic arriving throughout:
 *
 *   - `pg_ctl restart -m fast` (every client told 57P01, the server back within a second);
 *   - `pg_ctl stop -m immediate` (a crash), the server started again 5 s later;
 *   - SIGSTOP to every process of the server, four times for 10 s (a paused server: connections
 *     open, nothing answers), SIGCONT after each. The web's statements are limited to 5 s, and it
 *     waits 1 s more for an answer: every API answer comes within 8 s (a JSON 503 while paused),
 *     never the pause's length. The workers run with DB_STATEMENT_TIMEOUT_MS=3000, so their
 *     statements too give up on the silent server and are retried. After each pause the indexer is
 *     at the chain's head, the dispatcher at the outbox's end, and the stored data equals the
 *     devnet's truth (test/indexer/storedTruth.ts).
 *
 * After each: no process exited, the API answered only JSON 200 or JSON 503 with Retry-After
 * (never a 500), the indexer's and dispatcher's /readyz said 503 while the server was down and 200
 * again after, and the data read through the API equals the chain. At the end every webhook event
 * was delivered. Also: a 10 MB upload sent with Node's http module reads back the web process's 413.
 * Part of `npm run test:faults` (`--reduced`: fewer ops). Prints a table: fault, injected, outcome.
 */
import { expect } from 'chai';
import http from 'node:http';
import { startContinuous, type ContinuousTraffic } from '../../devnet/index.js';
import { createDb, type Db } from '../../shared/db/client.js';
import { indexedBlock } from '../indexer/support.js';
import { expectMatchesTruth } from '../indexer/storedTruth.js';
import { createMigratedDatabaseOn, startPostgresServer, type PostgresServer } from '../helpers/pgServer.js';
import { postgresServerBinaries } from '../helpers/pgReplica.js';
import { expectedEvents } from '../webhooks/support/expectedEvents.js';
import { startApiLoad, statusSummary, type Answer } from './support/apiLoad.js';
import { apiDifference } from './support/apiTruth.js';
import { httpStatus, startProductOnDatabase, type ProductOnDatabase } from './support/productOnDatabase.js';
import { waitUntil } from './support/childProcess.js';

const REDUCED = process.argv.includes('--reduced') || process.env.FAULTS_REDUCED === '1';
const OPS = REDUCED ? 60 : 200;
const CRASH_DOWN_MS = 5_000;
const PAUSES = 4;
const PAUSE_MS = 10_000;
/** The web's statement timeout (5 s), the grace after it (1 s), and room for a busy machine: not the pause's 10 s. */
const PAUSED_ANSWER_BOUND_MS = 8_000;
/** The workers' DB_STATEMENT_TIMEOUT_MS: shorter than a pause, so they give up on the silent server too. */
const WORKER_STATEMENT_TIMEOUT_MS = 3_000;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const seconds = (ms: number): string => (ms / 1000).toFixed(1);

type Row = { fault: string; injected: string; outcome: string };

describe(`PostgreSQL restarted and crashed under load${REDUCED ? ' (reduced run)' : ''}`, function () {
  this.timeout(REDUCED ? 300_000 : 600_000);
  const rows: Row[] = [];
  let server: PostgresServer;
  let product: ProductOnDatabase;
  let traffic: ContinuousTraffic | undefined;
  /** The test's own reads of the stored data (never during an outage). */
  let store: Db;

  before(async function () {
    if (!postgresServerBinaries()) this.skip();
    server = await startPostgresServer();
    const databaseUrl = await createMigratedDatabaseOn(server);
    const workerEnv = { DB_STATEMENT_TIMEOUT_MS: String(WORKER_STATEMENT_TIMEOUT_MS) };
    product = await startProductOnDatabase(databaseUrl, {
      ops: OPS,
      seed: 5,
      name: 'pg faults',
      env: (_devnet, name) => (name === 'web' ? {} : workerEnv),
    });
    store = await createDb({ databaseUrl, max: 2 });
  });

  after(async () => {
    await traffic?.stop();
    await product?.stop();
    await store?.close();
    await server?.stop();
    printTable();
  });

  type Outcome = { answers: Answer[]; downAt: number; upAt: number; recovered: Record<'indexer' | 'dispatcher', number> };

  /**
   * Runs `outage` under API load and devnet traffic; then waits for both workers' /readyz to be 200
   * and the API to equal the chain, and checks every answer and that no process exited.
   */
  async function underLoad(fault: string, injected: string, outage: () => Promise<{ downAt: number; upAt: number }>): Promise<Outcome> {
    const sample = product.devnet.truth.userOps.filter((_, i) => i % 20 === 0).map((o) => `/v0/getUserOp?hash=${o.userOpHash}`);
    const load = startApiLoad({
      baseUrl: product.webUrl,
      key: product.key,
      // The last path is never cached: it reaches the database whatever the cache holds.
      paths: ['/v0/getLatestUserOps?network=devnet&first=10', ...sample, '/v0/getLatestUserOps?network=devnet&first=1&skip={n}'],
    });
    traffic = startContinuous(product.devnet, { intervalMs: 700, opsPerTick: 3, seed: rows.length + 1 });
    try {
      await waitUntil('answers before the outage', () => load.answers.length >= 20);
      const notReady = { indexer: 0, dispatcher: 0 };
      let probing = true;
      const probe = (async () => {
        while (probing) {
          for (const name of ['indexer', 'dispatcher'] as const) if ((await httpStatus(product.readyz[name])) === 503) notReady[name]++;
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      const { downAt, upAt } = await outage();
      const recovered = { indexer: 0, dispatcher: 0 };
      await waitUntil(
        'the indexer and the dispatcher to be ready again',
        async () => {
          for (const name of ['indexer', 'dispatcher'] as const)
            if (!recovered[name] && (await httpStatus(product.readyz[name])) === 200) recovered[name] = Date.now();
          return Boolean(recovered.indexer && recovered.dispatcher);
        },
        60_000,
      );
      probing = false;
      await probe;
      await traffic.stop();
      traffic = undefined;
      let difference: string | null = 'not checked';
      await waitUntil(
        `the API to equal the chain after ${fault}`,
        async () => (difference = await apiDifference(product.webUrl, product.key, product.devnet.truth)) === null,
        120_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${difference}`);
      });
      const answers: Answer[] = await load.stop();
      expect(product.exits, 'processes that exited').to.deep.equal([]);
      const bad = answers.filter((a) => a.status === 0 || !a.json || (a.status >= 500 && !(a.status === 503 && a.retryAfter)));
      expect(
        bad.map((a) => `${a.status} ${a.path} ${a.error ?? ''} at +${a.at - downAt} ms`),
        'answers other than JSON 200/4xx or JSON 503 with Retry-After',
      ).to.deep.equal([]);
      const after = (name: 'indexer' | 'dispatcher') => seconds(recovered[name] - upAt);
      rows.push({
        fault,
        injected: `${injected}, ${answers.length} requests`,
        outcome: `no exit; ${statusSummary(answers)}; /readyz 503 seen indexer×${notReady.indexer} dispatcher×${notReady.dispatcher}; ready again ${after('indexer')} s (indexer) and ${after('dispatcher')} s (dispatcher) after the server was back; API = chain (${product.devnet.truth.userOps.length} ops)`,
      });
      return { answers, downAt, upAt, recovered };
    } catch (err) {
      rows.push({ fault, injected, outcome: `FAILED: ${(err as Error).message.split('\n')[0]}` });
      await load.stop();
      throw err;
    }
  }

  it('rides out a fast restart (57P01 to every client)', async () => {
    await underLoad('PostgreSQL restarted (pg_ctl restart -m fast)', 'one restart', async () => {
      const downAt = Date.now();
      await server.restartFast();
      return { downAt, upAt: Date.now() };
    });
  });

  it(`rides out a crash, the server down ${CRASH_DOWN_MS / 1000} s`, async () => {
    await underLoad('PostgreSQL crashed (pg_ctl stop -m immediate)', `${CRASH_DOWN_MS / 1000} s down`, async () => {
      const downAt = Date.now();
      await server.crash();
      await new Promise((r) => setTimeout(r, CRASH_DOWN_MS));
      // Both workers said 503 while it was down (probed above); the web answered 503s.
      expect(await httpStatus(product.readyz.indexer), 'indexer /readyz while down').to.equal(503);
      expect(await httpStatus(product.readyz.dispatcher), 'dispatcher /readyz while down').to.equal(503);
      await server.start();
      return { downAt, upAt: Date.now() };
    });
  });

  it(`rides out ${PAUSES} pauses of ${PAUSE_MS / 1000} s (SIGSTOP): JSON 503s within ${PAUSED_ANSWER_BOUND_MS / 1000} s, at the head after each`, async () => {
    const unavailable: number[] = [];
    const slowest: number[] = [];
    const backAfter: number[] = [];
    for (let pause = 1; pause <= PAUSES; pause++) {
      const run = await underLoad(`PostgreSQL paused (SIGSTOP), ${pause} of ${PAUSES}`, `${PAUSE_MS / 1000} s paused`, async () => {
        const downAt = Date.now();
        server.pause();
        await new Promise((r) => setTimeout(r, PAUSE_MS));
        server.resume();
        return { downAt, upAt: Date.now() };
      });
      // A request is answered within the web's bound whenever it was sent: held open, it would
      // have waited for the pause's end (and answered 200 then).
      const held = run.answers.filter((a) => a.ms >= PAUSED_ANSWER_BOUND_MS);
      expect(
        held.map((a) => `${a.status} ${a.path} after ${a.ms} ms, sent at +${a.at - a.ms - run.downAt} ms`),
        `answers that took ${PAUSED_ANSWER_BOUND_MS} ms or more`,
      ).to.deep.equal([]);
      unavailable.push(...run.answers.filter((a) => a.status === 503 && a.at > run.downAt && a.at - a.ms < run.upAt).map((a) => a.ms));
      slowest.push(Math.max(...run.answers.map((a) => a.ms)));
      backAfter.push(Math.max(run.recovered.indexer, run.recovered.dispatcher) - run.upAt);

      // Traffic has stopped (underLoad): the indexer is at the chain's head with the known
      // addresses' transfers read, the dispatcher at the outbox's end, and the rows equal the truth.
      const head = Number(await product.devnet.rpc.call<string>('eth_blockNumber'));
      const chainId = product.devnet.chainId;
      await waitUntil(
        `the indexer at the head (${head}) and the dispatcher at the outbox's end after pause ${pause}`,
        async () => {
          const { rows } = await store.query<{ pending: string; behind: boolean }>(
            `select (select count(*) from known_addresses where chain_id = $1 and backfilled_to is null) as pending,
                    coalesce((select max(id) from outbox_events where chain_id = $1), 0) >
                      coalesce((select last_event_id from webhook_outbox_cursors where chain_id = $1), 0) as behind`,
            [chainId],
          );
          return (await indexedBlock(store, chainId)) >= head && rows[0]!.pending === '0' && !rows[0]!.behind;
        },
        60_000,
      );
      await expectMatchesTruth(store, product.devnet.truth, (got, want, what) =>
        expect(got, `${what} after pause ${pause}`).to.deep.equal(want),
      );
    }
    // Cached answers need no database: the requests that reached it were answered 503.
    expect(unavailable.length, 'JSON 503s answered during the pauses').to.be.greaterThan(0);
    rows.push({
      fault: `PostgreSQL paused ×${PAUSES} (figures)`,
      injected: `${PAUSES} × ${PAUSE_MS / 1000} s`,
      outcome: `503 during the pauses: ${unavailable.length}, median ${seconds(median(unavailable))} s, max ${seconds(Math.max(...unavailable))} s; slowest answer per pause ${slowest.map(seconds).join(', ')} s; both workers ready ${backAfter.map(seconds).join(', ')} s after SIGCONT (median ${seconds(median(backAfter))} s); stored data = truth after each`,
    });
  });

  it('delivered every webhook event afterwards', async () => {
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
        rows.push({
          fault: 'webhooks after the outages',
          injected: '-',
          outcome: `FAILED: ${[...expected].filter((e) => !delivered().has(e)).length} missing`,
        });
        throw err;
      },
    );
    rows.push({
      fault: 'webhooks after the outages',
      injected: `${expected.size} events`,
      outcome: `all delivered (${product.receiver.received.length} requests)`,
    });
    expect(product.exits, 'processes that exited').to.deep.equal([]);
  });

  it('answers a 10 MB upload sent with Node http with a JSON 413 it reads', async () => {
    const body = Buffer.alloc(10 * 1024 * 1024, 'a');
    const answers = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<string>((resolve) => {
            const req = http.request(
              `${product.webUrl}/v0/createWebhook`,
              { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-api-key': product.key } },
              (res) => {
                let text = '';
                res.on('data', (c: Buffer) => (text += c.toString()));
                res.on('end', () => resolve(`${res.statusCode} ${text}`));
              },
            );
            req.on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`));
            req.end(body);
          }),
      ),
    );
    rows.push({ fault: '10 MB upload (Node http)', injected: '4 uploads', outcome: answers.map((a) => a.slice(0, 3)).join(', ') });
    for (const a of answers) expect(a).to.match(/^413 .*PAYLOAD_TOO_LARGE/);
  });

  function printTable(): void {
    const width = (k: keyof Row) => Math.max(k.length, ...rows.map((r) => r[k].length));
    const line = (r: Row) => `| ${r.fault.padEnd(width('fault'))} | ${r.injected.padEnd(width('injected'))} | ${r.outcome} |`;
    console.log(
      `\nPostgreSQL faults${REDUCED ? ' (reduced)' : ''}:\n${line({ fault: 'fault', injected: 'injected', outcome: 'outcome' })}`,
    );
    console.log(`|${'-'.repeat(width('fault') + 2)}|${'-'.repeat(width('injected') + 2)}|---|`);
    for (const r of rows) console.log(line(r));
  }
});
