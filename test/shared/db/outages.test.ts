/**
 * Database outages are weather: on the shared PostgreSQL, every backend of the test's
 * database is ended (`pg_terminate_backend`, what a restart tells each client: 57P01) while an
 * indexer and a dispatcher work in this process. An 'error' event nobody listens to would end the
 * mocha process itself; the test asks that both carry on: the data equals the chain, each op is in
 * the outbox once, and every webhook event is delivered. Restarts and crashes of a whole server
 * are in the fault suite (test/faults/postgres.faults.ts), on a private server.
 */
import { expect } from 'chai';
import { register } from 'prom-client';
import { generate, startDevnet, type Devnet } from '../../../devnet/index.js';
import { startIndexer, type Indexer } from '../../../indexer/index.js';
import { createDb, type Db } from '../../../shared/db/client.js';
import { createLogger } from '../../../shared/log.js';
import { startDispatcher, type Dispatcher } from '../../../webhooks/startDispatcher.js';
import { createTestKey, createTestApp, testConfig } from '../../helpers/app.js';
import { TEST_DATABASE_URL, useTestDb } from '../../helpers/db.js';
import { expectMatchesTruth } from '../../indexer/storedTruth.js';
import { devnetConfig, eventually, indexedBlock, quietLogger } from '../../indexer/support.js';
import { expectedEvents, mostCommon } from '../../webhooks/support/expectedEvents.js';
import { startReceiver, type Receiver } from '../../webhooks/support/receiver.js';
import request from 'supertest';

const TERMINATIONS = 4;

describe('a database whose connections are all ended', function () {
  this.timeout(180_000);
  const t = useTestDb();
  let db: Db;
  let devnet: Devnet;
  let receiver: Receiver;
  let indexer: Indexer | undefined;
  let dispatcher: Dispatcher | undefined;

  /** Ends every other connection to the test's database; answers how many. */
  async function terminateBackends(): Promise<number> {
    const { rows } = await t.db.query<{ n: string }>(
      `select count(*) filter (where pg_terminate_backend(pid)) as n
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    );
    return Number(rows[0]!.n);
  }

  before(async function () {
    if (!TEST_DATABASE_URL) this.skip(); // PGlite is in-process: nothing to end
    db = await createDb({ databaseUrl: t.url!, max: 10 });
  });
  after(async () => {
    await dispatcher?.stop();
    await indexer?.stop();
    await receiver?.close();
    await devnet?.stop();
    await db?.close();
  });

  it('keeps a session, a LISTEN and the pool working, and counts the outage', async () => {
    const notified: string[] = [];
    const unlisten = await db.listen('opscan_outage_test', (payload) => notified.push(payload));
    const lost = await db.withSession(async (session) => {
      await session.query('select 1');
      expect(await terminateBackends()).to.be.greaterThan(0);
      return Promise.race([session.lost, new Promise((r) => setTimeout(() => r(null), 5_000))]);
    });
    expect((lost as Error | null)?.message, 'the session reports its loss').to.match(/terminat/i);
    expect((await db.query<{ one: number }>('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
    // The LISTEN is made again by itself; it says so with an empty payload, then hears NOTIFYs again.
    await eventually(async () => notified.includes(''), 10_000, 'the LISTEN to reconnect');
    await db.query(`select pg_notify('opscan_outage_test', 'after')`);
    await eventually(async () => notified.includes('after'), 10_000, 'a NOTIFY after the reconnect');
    await unlisten();
    const metrics = await register.getSingleMetricAsString('opscan_db_outages_total');
    expect(metrics).to.match(/opscan_db_outages_total\{database="primary"\} [1-9]/);
  });

  it('indexes and delivers webhooks through repeated terminations, exactly as without them', async () => {
    devnet = await startDevnet();
    await generate(devnet, { ops: 80, days: 1, seed: 7, layout: { maxBundlesPerBlock: 2, maxOpsPerBundle: 4 } });
    receiver = await startReceiver();
    const key = await createTestKey(t.db, 'outages');
    const bundler = mostCommon(devnet.truth.userOps.map((o) => o.bundler));
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
    const created = await request(createTestApp(t.db, env))
      .post('/v0/createWebhook')
      .set('x-api-key', key)
      .send({ webhookUrl: `${receiver.url}/hook`, filter: 'BUNDLER', identifier: bundler, chainId: 31337, apiName: 'outages' });
    expect(created.status).to.equal(200);

    const log = createLogger({ level: 'silent', name: 'outages' });
    dispatcher = await startDispatcher({ db, config: testConfig(env), log, options: { pollIntervalMs: 100, timeoutMs: 2_000 } });
    // Ranges of 2 blocks: many small batches, so an ending lands in the middle of the backfill.
    indexer = startIndexer({
      db,
      config: devnetConfig(devnet.rpcUrl),
      log: quietLogger(),
      tuning: { initialLogRange: 2, maxLogRange: 2, lockRetryMs: 500 },
    });
    const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
    let ended = 0;
    for (let i = 0; i < TERMINATIONS; i++) {
      const before = await indexedBlock(t.db, devnet.chainId);
      await eventually(async () => (await indexedBlock(t.db, devnet.chainId)) > before || before >= head, 60_000, 'a batch committed');
      ended += await terminateBackends();
    }
    expect(ended, 'connections ended').to.be.greaterThan(TERMINATIONS);
    // At the head, and done with the transfer backfill of the addresses that became known
    // (INDEXER_TRANSFERS=known reads their earlier token logs once the head is reached).
    const pendingBackfill = async (): Promise<number> =>
      Number(
        (
          await t.db.query<{ n: string }>('select count(*) as n from known_addresses where chain_id = $1 and backfilled_to is null', [
            devnet.chainId,
          ])
        ).rows[0]!.n,
      );
    await eventually(
      async () => (await indexedBlock(t.db, devnet.chainId)) >= head && (await pendingBackfill()) === 0,
      90_000,
      'the indexer to reach the head and backfill the known addresses',
    );
    await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    const { rows } = await t.db.query<{ n: string; ops: string }>(
      `select count(*) as n, count(distinct user_op_hash) as ops from outbox_events where chain_id = $1 and type = 'user_operation'`,
      [devnet.chainId],
    );
    expect(rows[0], 'each op in the outbox once').to.deep.equal({
      n: String(devnet.truth.userOps.length),
      ops: String(devnet.truth.userOps.length),
    });

    const expected = expectedEvents(devnet.truth, 'BUNDLER', bundler);
    const delivered = () =>
      new Set(
        receiver.received.map((r) => {
          const body = JSON.parse(r.body) as { type: string; data: { userOp?: { userOpHash: string }; userOpHash?: string } };
          return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
        }),
      );
    await eventually(async () => [...expected].every((e) => delivered().has(e)), 90_000, 'every webhook event to be delivered');
  });
});
