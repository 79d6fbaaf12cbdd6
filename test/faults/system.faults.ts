/**
 * The whole system under faults: web, indexer and dispatcher as separate processes on
 * devnet traffic, and after each fault the data read back through the API compared with the
 * devnet's ground truth.
 *
 *   - RPC: a proxy in front of the node fails 20% of the indexer's requests (delays, hangs, 429/503,
 *     closed sockets, truncated JSON, JSON-RPC errors, shuffled and incomplete batch answers);
 *   - the indexer SIGKILLed during its backfill, restarted each time;
 *   - reorgs of depth 1–10 while webhooks are being delivered;
 *   - the web process's Redis (a redis-server of this suite's own) stopped and restarted under load;
 *   - the web process's PostgreSQL connections cut for 5 s under load (a TCP proxy in front);
 *   - webhook receivers failing half their requests, hanging, or answering 410 Gone.
 *
 * `npm run test:faults` runs it in full; `npm run test:faults -- --reduced` is CI's shorter run
 * (fewer ops, kills and reorgs, same fault kinds). Everything is on 127.0.0.1, bounded in count and
 * time, and stops by itself. Prints a table: fault, count injected, outcome.
 */
import { expect } from 'chai';
import { generate, reorg, startDevnet, type Devnet } from '../../devnet/index.js';
import { Random } from '../../devnet/random.js';
import * as outboxDeadLetters from '../../shared/db/tables/outboxDeadLetters.js';
import { createTestKey } from '../helpers/app.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ALL_FAULTS, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';
import { indexedBlock } from '../indexer/support.js';
import { expectedEvents, mostCommon } from '../webhooks/support/expectedEvents.js';
import { startReceiver, verifySignature, type Receiver } from '../webhooks/support/receiver.js';
import { callApi, startApiLoad, statusSummary, type Answer } from './support/apiLoad.js';
import { apiDifference } from './support/apiTruth.js';
import { freePort, startChild, waitUntil, type Child } from './support/childProcess.js';
import { startRedisServer, type RedisServer } from './support/redisServer.js';

const REDUCED = process.argv.includes('--reduced') || process.env.FAULTS_REDUCED === '1';
const PLAN = REDUCED
  ? { ops: 150, kills: 3, reorgDepths: [1, 4, 10], loadMs: 2_000 }
  : { ops: 400, kills: 10, reorgDepths: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], loadMs: 5_000 };
const RPC_FAULT_RATE = 0.2;
const OUTAGE_MS = 5_000;
/** The dispatcher's request timeout; the hanging receiver holds its answer longer than that. */
const DELIVERY_TIMEOUT_MS = 1_000;
const HANG_MS = 3_000;
/** Fast retries, and enough of them that a receiver failing half the time is never given up on. */
const RETRY_SCHEDULE = [0, ...Array.from({ length: 39 }, () => 200)];
const READ_PATHS = (hashes: string[]) => [
  '/v0/getLatestUserOps?network=devnet&first=20',
  '/v0/getLatestBundles?network=devnet&first=20',
  ...hashes.map((h) => `/v0/getUserOp?hash=${h}`),
  '/v0/getNetworks',
];

type Row = { fault: string; injected: string; outcome: string };
type Hook = { label: string; filter: string; address: string; id: string; secret: string; receiver: Receiver };
type Body = {
  type: string;
  webhookId: string;
  data: {
    userOp?: { userOpHash: string };
    userOpHash?: string;
    block?: { number: number; hash: string };
    userOpHashes?: string[];
    commonAncestor?: number;
  };
};

describe(`the whole system under faults${REDUCED ? ' (reduced run)' : ''}`, function () {
  this.timeout(REDUCED ? 600_000 : 1_800_000);
  const rows: Row[] = [];
  const apiAnswers: Answer[] = [];
  let devnet: Devnet;
  let database: TestDatabase;
  let key: string;
  let redis: RedisServer;
  let pgProxy: TcpProxy;
  let rpcProxy: FaultProxy;
  let web: Child;
  let webUrl: string;
  let dispatcher: Child;
  let indexer: Child | undefined;
  const children: Child[] = [];
  const hooks: Hook[] = [];
  const receivers: Receiver[] = [];
  let kills = 0;
  let hangs = 0;

  /** Runs a phase and records its row, with the failure as its outcome if it throws. */
  async function phase(fault: string, injected: () => string, run: () => Promise<string>): Promise<void> {
    try {
      const outcome = await run();
      rows.push({ fault, injected: injected(), outcome });
    } catch (err) {
      rows.push({ fault, injected: injected(), outcome: `FAILED: ${(err as Error).message.split('\n')[0]}` });
      throw err;
    }
  }

  /** Waits until the API answers exactly the ground truth (caches of the old head expire within a block). */
  async function expectApiEqualsTruth(after: string): Promise<string> {
    let difference: string | null = 'not checked yet';
    await waitUntil(
      `the API to equal the ground truth after ${after} (last difference: ${difference})`,
      async () => (difference = await apiDifference(webUrl, key, devnet.truth)) === null,
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message.split(' (last')[0]}: ${difference}`);
    });
    return `API = ground truth (${devnet.truth.userOps.length} ops)`;
  }

  const dbUrl = () => database.url!;
  const startIndexerChild = () => {
    // Ranges of 2 blocks: many small batches, so a SIGKILL lands anywhere in the backfill.
    const child = startChild('indexer', 'test/indexer/indexerProcess.ts', { args: [dbUrl(), rpcProxy.url, '2'], env: {} });
    children.push(child);
    return child;
  };

  before(async function () {
    if (!TEST_DATABASE_URL) throw new Error('the fault suite needs PostgreSQL: set TEST_DATABASE_URL (and it starts its own redis-server)');
    devnet = await startDevnet();
    await generate(devnet, { ops: PLAN.ops, days: 2, seed: 3, layout: { maxBundlesPerBlock: 2, maxOpsPerBundle: 5 } });
    database = await createTestDatabase();
    key = await createTestKey(database.db, 'faults', 1_000_000);
    redis = await startRedisServer();
    const pg = new URL(TEST_DATABASE_URL);
    pgProxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    rpcProxy = await startFaultProxy({
      upstream: devnet.rpcUrl,
      faultRate: RPC_FAULT_RATE,
      faults: ALL_FAULTS,
      hangMs: 1_000,
      maxDelayMs: 800,
      seed: 11,
      lifetimeMs: REDUCED ? 600_000 : 1_800_000,
    });

    const port = await freePort();
    webUrl = `http://127.0.0.1:${port}`;
    const proxied = new URL(dbUrl());
    proxied.host = `127.0.0.1:${pgProxy.port}`;
    web = startChild('web', 'server/main.ts', {
      env: {
        DATABASE_URL: proxied.toString(),
        REDIS_URL: redis.url,
        PORT: String(port),
        NETWORKS: 'devnet',
        RPC_URL_DEVNET: devnet.rpcUrl,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        LOG_LEVEL: 'error',
      },
    });
    children.push(web);
    await waitUntil(
      'the web process to answer /healthz',
      async () => (await callApi(webUrl, key, '/healthz')).answer.status === 200,
      60_000,
    );

    // Receivers: one failing half its requests, one hanging on every third, one answering 410 Gone.
    const coin = new Random(5);
    const flaky = await startReceiver(() => ({ status: coin.int(0, 1) === 0 ? 500 : 200 }));
    const hanging = await startReceiver((n) => (n % 3 === 0 ? (hangs++, { delayMs: HANG_MS }) : {}));
    const gone = await startReceiver(() => ({ status: 410 }));
    receivers.push(flaky, hanging, gone);
    const truth = devnet.truth;
    const choices: Array<[string, string, string, Receiver]> = [
      ['flaky BUNDLER', 'BUNDLER', mostCommon(truth.userOps.map((o) => o.bundler)), flaky],
      ['flaky FACTORY', 'FACTORY', mostCommon(truth.accounts.map((a) => a.factory)), flaky],
      ['hanging PAYMASTER', 'PAYMASTER', mostCommon(truth.userOps.map((o) => o.paymaster)), hanging],
      ['gone ADDRESS', 'ADDRESS', mostCommon(truth.userOps.map((o) => o.sender)), gone],
    ];
    for (const [label, filter, address, receiver] of choices) {
      const res = await fetch(`${webUrl}/v0/createWebhook`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ webhookUrl: `${receiver.url}/${filter}`, filter, identifier: address, chainId: 31337, apiName: label }),
      });
      const body = (await res.json()) as { webhook: { id: string; secret: string } };
      expect(res.status, `createWebhook ${label}`).to.equal(200);
      hooks.push({ label, filter, address, id: body.webhook.id, secret: body.webhook.secret, receiver });
    }

    dispatcher = startChild('dispatcher', 'test/webhooks/support/dispatcherChild.ts', {
      env: {
        DATABASE_URL: dbUrl(),
        NETWORKS: 'devnet',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        LOG_LEVEL: 'silent',
        DISPATCHER_OPTIONS: JSON.stringify({
          pollIntervalMs: 200,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          retrySchedule: RETRY_SCHEDULE,
          concurrency: 16,
        }),
      },
    });
    children.push(dispatcher);
    await dispatcher.printed('ready');
  });

  after(async () => {
    await Promise.all(children.map((c) => c.kill()));
    await Promise.all(receivers.map((r) => r.close()));
    await rpcProxy?.stop();
    await pgProxy?.close();
    await redis?.stop();
    await database?.drop();
    await devnet?.stop();
    printTable();
  });

  it(`indexes through a faulty RPC and ${PLAN.kills} SIGKILLs during the backfill exactly once`, async () => {
    const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
    const rng = new Random(42);
    await phase(
      `indexer SIGKILLed during backfill (RPC faults on ${RPC_FAULT_RATE * 100}% of requests)`,
      () => `${kills} kills`,
      async () => {
        while (kills < PLAN.kills && (await indexedBlock(database.db, devnet.chainId)) < head) {
          const child = startIndexerChild();
          await child.printed('ready');
          // Killed at a random moment after a commit of its own, so every run moves the cursor.
          const before = await indexedBlock(database.db, devnet.chainId);
          await waitUntil(
            `indexer run ${kills + 1} to commit a batch`,
            async () => (await indexedBlock(database.db, devnet.chainId)) > before,
            120_000,
          );
          await new Promise((r) => setTimeout(r, rng.int(0, 150)));
          await child.kill('SIGKILL');
          kills++;
        }
        expect(kills, 'SIGKILLs before the backfill finished').to.equal(PLAN.kills);
        indexer = startIndexerChild();
        await indexer.printed('ready');
        await waitUntil(
          'the restarted indexer to reach the head',
          async () => (await indexedBlock(database.db, devnet.chainId)) >= head,
          300_000,
        );
        // Exactly once: every op announced once in the outbox, however many times its batch was cut.
        const { rows: events } = await database.db.query<{ type: string; n: string; distinct_ops: string }>(
          `select type, count(*) as n, count(distinct user_op_hash) as distinct_ops from outbox_events where chain_id = $1 group by type order by type`,
          [devnet.chainId],
        );
        const counts = Object.fromEntries(events.map((e) => [e.type, [Number(e.n), Number(e.distinct_ops)]]));
        expect(counts, 'outbox events per type [count, distinct ops]').to.deep.equal({
          account_deployed: [devnet.truth.accounts.length, devnet.truth.accounts.length],
          user_operation: [devnet.truth.userOps.length, devnet.truth.userOps.length],
        });
        return `${await expectApiEqualsTruth('the backfill')}; each op in the outbox once`;
      },
    );
  });

  it('ends equal to the new canonical chain after each reorg, webhooks delivering throughout', async () => {
    const depths = PLAN.reorgDepths;
    let done = 0;
    await phase(
      `reorgs of depth ${depths.join(', ')} under webhook delivery`,
      () => `${done} reorgs`,
      async () => {
        for (const depth of depths) {
          await reorg(devnet, depth, { seed: depth });
          const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
          await waitUntil(
            `the indexer to follow the reorg of depth ${depth}`,
            async () => (await indexedBlock(database.db, devnet.chainId)) === head,
            120_000,
          );
          await expectApiEqualsTruth(`the reorg of depth ${depth}`);
          done++;
        }
        return `API = ground truth after each (${devnet.truth.userOps.length} ops at the end)`;
      },
    );
  });

  it('answers through a Redis outage without a 5xx', async () => {
    let load: ReturnType<typeof startApiLoad> | undefined;
    await phase(
      'Redis stopped and restarted under API load',
      () => `${OUTAGE_MS / 1000} s down, ${load?.answers.length ?? 0} requests`,
      async () => {
        load = startApiLoad({ baseUrl: webUrl, key, paths: READ_PATHS(sampleHashes()) });
        await waitUntil('answers before the outage', () => load!.answers.length >= 20);
        await redis.stop();
        const stoppedAt = Date.now();
        await waitUntil('the outage to last', () => Date.now() - stoppedAt >= OUTAGE_MS, OUTAGE_MS + 1_000);
        await redis.start();
        const restartedAt = Date.now();
        await waitUntil(
          'answers after Redis returned',
          () => load!.answers.filter((a) => a.at > restartedAt + PLAN.loadMs / 2 && a.status === 200).length >= 20,
          60_000,
        );
        const answers = await load.stop();
        apiAnswers.push(...answers);
        const during = answers.filter((a) => a.at >= stoppedAt && a.at <= restartedAt);
        expect(during.length, 'requests answered while Redis was down').to.be.greaterThan(0);
        const bad = answers.filter((a) => a.status === 0 || a.status >= 500 || !a.json);
        expect(
          bad.map((a) => `${a.status} ${a.path} ${a.error ?? ''}`),
          'answers that are not JSON, or 5xx, or none',
        ).to.deep.equal([]);
        return `0 5xx (${statusSummary(answers)}; ${during.length} while down)`;
      },
    );
  });

  it('answers JSON 503 with Retry-After while PostgreSQL is cut, and recovers by itself', async () => {
    let load: ReturnType<typeof startApiLoad> | undefined;
    await phase(
      'PostgreSQL connections cut under API load',
      () => `${OUTAGE_MS / 1000} s cut, ${load?.answers.length ?? 0} requests`,
      async () => {
        load = startApiLoad({ baseUrl: webUrl, key, paths: READ_PATHS(sampleHashes()) });
        await waitUntil('answers before the cut', () => load!.answers.length >= 20);
        pgProxy.cut();
        const cutAt = Date.now();
        await waitUntil('the cut to last', () => Date.now() - cutAt >= OUTAGE_MS, OUTAGE_MS + 1_000);
        pgProxy.restore();
        const restoredAt = Date.now();
        // Recovered: fresh (uncached) reads succeed again.
        await waitUntil(
          'the web process to read the database again',
          async () => (await callApi(webUrl, key, `/v0/getUserOp?hash=${sampleHashes()[0]}&_=${Date.now()}`)).answer.status === 200,
          60_000,
        );
        const recoveredAt = Date.now();
        await waitUntil('answers after recovery', () => load!.answers.filter((a) => a.at > recoveredAt).length >= 20, 60_000);
        const answers = await load.stop();
        apiAnswers.push(...answers);
        const outage = (a: Answer) => a.at >= cutAt && a.at <= recoveredAt;
        const unavailable = answers.filter((a) => a.status === 503);
        const bad = answers.filter(
          (a) => a.status === 0 || !a.json || (a.status >= 500 && !(a.status === 503 && a.retryAfter && outage(a))),
        );
        expect(
          bad.map((a) => `${a.status} ${a.path} retry-after=${a.retryAfter} ${a.error ?? ''} at +${a.at - cutAt} ms`),
          'answers other than JSON 200/4xx, or JSON 503 with Retry-After during the outage',
        ).to.deep.equal([]);
        expect(
          answers.filter((a) => a.at > recoveredAt).every((a) => a.status === 200),
          'all 200 after recovery',
        ).to.equal(true);
        await expectApiEqualsTruth('the PostgreSQL cut');
        return `0 other 5xx; ${unavailable.length} JSON 503 + Retry-After while cut; recovered ${((recoveredAt - restoredAt) / 1000).toFixed(1)} s after (${statusSummary(answers)})`;
      },
    );
  });

  it('delivers every webhook event at least once, signed, and announces every reorged-away op it sent', async () => {
    const goneHook = hooks.find((h) => h.label === 'gone ADDRESS')!;
    const deliverable = hooks.filter((h) => h !== goneHook);
    const expectedOf = (h: Hook) => expectedEvents(devnet.truth, h.filter, h.address);
    const received = (h: Hook) => h.receiver.received.filter((r) => (JSON.parse(r.body) as Body).webhookId === h.id);
    const delivered = (h: Hook) =>
      new Set(
        received(h)
          .filter((r) => r.status >= 200 && r.status < 300)
          .map((r) => eventOf(JSON.parse(r.body) as Body)),
      );

    await phase(
      'webhook receivers: 500 on half the requests, hanging on a third, 410 Gone',
      () => {
        const all = receivers.flatMap((r) => r.received);
        return `${all.filter((r) => r.status === 500).length}×500, ${hangs} hangs, ${all.filter((r) => r.status === 410).length}×410`;
      },
      async () => {
        await waitUntil(
          'every expected event to be delivered to the flaky and hanging receivers',
          () => deliverable.every((h) => [...expectedOf(h)].every((e) => delivered(h).has(e))),
          180_000,
        ).catch((err: Error) => {
          const missing = deliverable.map((h) => `${h.label}: ${[...expectedOf(h)].filter((e) => !delivered(h).has(e)).length} missing`);
          throw new Error(`${err.message} (${missing.join(', ')})`);
        });
        for (const h of hooks) for (const r of received(h)) verifySignature(h.secret, r);

        // No delivery of an op a reorg removed without a reorg notice naming it (to the same webhook).
        const canonicalHash = new Map<number, string>();
        const hashOf = async (n: number) => {
          if (!canonicalHash.has(n))
            canonicalHash.set(n, (await devnet.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash);
          return canonicalHash.get(n)!;
        };
        const reorgedAway = new Set<string>();
        for (const h of hooks) {
          const bodies = received(h).map((r) => JSON.parse(r.body) as Body);
          const announced = new Set(bodies.filter((b) => b.type === 'reorg').flatMap((b) => b.data.userOpHashes ?? []));
          for (const b of bodies.filter((x) => x.type === 'user_operation')) {
            if ((await hashOf(b.data.block!.number)) === b.data.block!.hash) continue;
            reorgedAway.add(`${h.id}:${b.data.userOp!.userOpHash}:${b.data.block!.hash}`);
            expect(announced.has(b.data.userOp!.userOpHash), `${h.label}: reorg notice for ${b.data.userOp!.userOpHash}`).to.equal(true);
          }
        }

        const list = await callApi(webUrl, key, '/v0/listWebhooks');
        const state = (list.body as { webhooks: Array<{ id: string; status: string; disabledReason: string | null }> }).webhooks.find(
          (w) => w.id === goneHook.id,
        );
        expect(state, 'the 410 webhook').to.include({ status: 'disabled', disabledReason: 'gone' });
        expect(await outboxDeadLetters.listByChain(database.db, devnet.chainId), 'dead-lettered outbox events').to.deep.equal([]);
        const total = deliverable.reduce((n, h) => n + expectedOf(h).size, 0);
        return `all ${total} events delivered, every signature valid; ${reorgedAway.size} ops delivered then reorged away, each named by a reorg notice; 410 webhook disabled after ${goneHook.receiver.received.length} request(s)`;
      },
    );
  });

  function sampleHashes(): string[] {
    return devnet.truth.userOps.filter((_, i) => i % 40 === 0).map((o) => o.userOpHash);
  }

  function eventOf(body: Body): string {
    return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
  }

  function printTable(): void {
    const stats = rpcProxy?.stats;
    // The indexer went through the proxy during the backfill and the reorgs: their rows say whether it coped.
    const indexed = rows.filter((r) => /SIGKILL|reorgs/.test(r.fault));
    const coped = indexed.length === 2 && indexed.every((r) => !r.outcome.startsWith('FAILED'));
    const rpcOutcome = coped ? 'absorbed (retried or reordered); stored data = ground truth' : 'see the failed indexer row';
    const rpcRows: Row[] = stats
      ? [
          ...ALL_FAULTS.map((f) => ({ fault: `RPC ${f}`, injected: String(stats[f]), outcome: rpcOutcome })),
          {
            fault: 'RPC requests (all)',
            injected: String(stats.requests),
            outcome: `${ALL_FAULTS.reduce((n, f) => n + stats[f], 0)} faulted`,
          },
        ]
      : [];
    const all = [
      ...rpcRows,
      ...rows,
      { fault: 'API requests under load (all)', injected: String(apiAnswers.length), outcome: statusSummary(apiAnswers) },
    ];
    const width = (k: keyof Row) => Math.max(k.length, ...all.map((r) => r[k].length));
    const line = (r: Row) => `| ${r.fault.padEnd(width('fault'))} | ${r.injected.padEnd(width('injected'))} | ${r.outcome} |`;
    console.log(`\nFault suite${REDUCED ? ' (reduced)' : ''}:\n${line({ fault: 'fault', injected: 'injected', outcome: 'outcome' })}`);
    console.log(`|${'-'.repeat(width('fault') + 2)}|${'-'.repeat(width('injected') + 2)}|---|`);
    for (const r of all) console.log(line(r));
  }
});
