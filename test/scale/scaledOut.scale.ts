/**
 * Every process scaled out at once, each a real OS process, on devnet traffic of
 * two chains (`devnet` 31337 and `devnet2` 31338), against a private PostgreSQL primary with a
 * streaming replica (test/helpers/pgReplica.ts) and a 3-master Redis Cluster
 * (test/helpers/redisCluster.ts), all started and removed here:
 *
 *   - two web processes on the cluster's cache, one reading from the replica (DATABASE_READ_URL);
 *   - two dispatchers sharing the outbox and the delivery queue;
 *   - an indexer per network, and a third that may index `devnet` too (the split leaves it idle).
 *
 * It checks that both web processes answer the ground truth of both chains; that every webhook
 * event is delivered at least once, with one delivery id per (webhook, event) and never two
 * attempts of one delivery in flight at once; and that SIGKILLing `devnet`'s indexer hands the
 * network to the standby within a heartbeat and a worker's start, indexing going on to the truth.
 *
 * `npm run test:scale` runs it in full; `npm run test:scale -- --reduced` (or SCALE_REDUCED=1) is CI's
 * shorter run: fewer user ops, the same processes and checks. Prints a summary table.
 */
import { expect } from 'chai';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { Random } from '../../devnet/random.js';
import { writerLockKey } from '../../indexer/writerLock.js';
import { MEMBER_HEARTBEAT_MS } from '../../indexer/membership.js';
import type { Db } from '../../shared/db/client.js';
import { envSuffix, findNetworkByChainId } from '../../shared/networks.js';
import { callApi } from '../faults/support/apiLoad.js';
import { apiDifference } from '../faults/support/apiTruth.js';
import { freePort, startChild, waitUntil, type Child } from '../faults/support/childProcess.js';
import { createTestKey } from '../helpers/app.js';
import { createMigratedDatabase, postgresServerBinaries, startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/pgReplica.js';
import { redisServerAvailable, startRedisCluster, type RedisCluster } from '../helpers/redisCluster.js';
import { indexedBlock } from '../indexer/support.js';
import { expectedEvents, mostCommon } from '../webhooks/support/expectedEvents.js';
import { startReceiver, verifySignature, type Receiver, type Received } from '../webhooks/support/receiver.js';

const REDUCED = process.argv.includes('--reduced') || process.env.SCALE_REDUCED === '1';
/** User ops per chain: before the failover, during it, and after it (so the standby must index). */
const PLAN = REDUCED ? { ops: 40, during: 20, after: 10 } : { ops: 1_000, during: 400, after: 100 };
const CHAIN_IDS = [31337, 31338] as const;
const FILTERS = ['BUNDLER', 'PAYMASTER', 'FACTORY', 'ADDRESS'] as const;
/**
 * A killed process's sessions close with it: the standby removes it at its next beat (every
 * MEMBER_HEARTBEAT_MS), then starts the network's worker, which loads its modules and takes the lock
 * (10.9 s in all on the loaded 2-core machine under tsx); the slack covers a busier one, inside the
 * 30 s within which docs/indexer.md says
 * a vanished process's networks move to the survivors.
 */
const HANDOVER_BOUND_MS = MEMBER_HEARTBEAT_MS + 15_000;

type Web = { name: string; url: string };
type Hook = { chainId: number; filter: string; address: string; id: string; secret: string };
type Body = { type: string; webhookId: string; data: { userOp?: { userOpHash: string }; userOpHash?: string } };

describe(`scaled out: 2 web (1 on a replica), 2 dispatchers, 3 indexers on 2 chains, a replica and a Redis Cluster${REDUCED ? ' (reduced)' : ''}`, function () {
  this.timeout(600_000);
  let pg: ReplicatedPostgres | undefined;
  let redis: RedisCluster | undefined;
  let db: Db | undefined;
  const devnets: Devnet[] = [];
  const children: Child[] = [];
  let receiver: Receiver | undefined;
  let key = '';
  const webs: Web[] = [];
  const dispatcherMetrics: string[] = [];
  const indexers = new Map<string, Child>();
  const hooks: Hook[] = [];
  const summary: Array<[string, string]> = [];

  before(async function () {
    if (!postgresServerBinaries()) {
      console.log('      skipped: the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) are not installed; set PG_BIN');
      this.skip();
    }
    if (!(await redisServerAvailable())) {
      console.log('      skipped: redis-server / redis-cli are not installed');
      this.skip();
    }
    const startedAt = Date.now();
    pg = await startReplicatedPostgres();
    redis = await startRedisCluster();
    db = await createMigratedDatabase(pg);
    key = await createTestKey(db, 'scaled-out', 1_000_000);
    for (const chainId of CHAIN_IDS) devnets.push(await startDevnet({ chainId }));
    await Promise.all(devnets.map((d, i) => generate(d, { ops: PLAN.ops, days: 2, seed: 3 + i })));

    const common: Record<string, string> = {
      DATABASE_URL: pg.primaryUrl('opscan'),
      DATABASE_READ_URL: '',
      REDIS_URL: redis.url,
      REDIS_CLUSTER: '',
      NETWORKS: 'devnet,devnet2',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      INDEXER_POLL_INTERVAL_MS: '1000',
      ...Object.fromEntries(
        devnets.flatMap((d) => [
          [`RPC_URL_${envSuffix(networkOf(d))}`, d.rpcUrl],
          [`START_BLOCK_${envSuffix(networkOf(d))}`, '0'],
        ]),
      ),
    };
    const start = (name: string, script: string, env: Record<string, string>) => {
      const child = startChild(name, script, { env: { ...common, ...env } });
      children.push(child);
      return child;
    };
    const healthy = (name: string, url: string) =>
      waitUntil(`${name} to answer /healthz`, async () => (await callApi(url, key, '/healthz')).answer.status === 200, 90_000);

    // Web processes: one reads from the primary, one from the replica; both cache on the cluster. The
    // replica is never skipped for lag here, so that pausing its replay shows where answers come from.
    const onReplica = { DATABASE_READ_URL: pg.replicaUrl('opscan'), READ_REPLICA_MAX_LAG_SECONDS: '3600' };
    for (const [name, env] of [
      ['web-primary', {}],
      ['web-replica', onReplica],
    ] as const) {
      const port = await freePort();
      start(name, 'server/main.ts', { ...env, PORT: String(port) });
      webs.push({ name, url: `http://127.0.0.1:${port}` });
    }
    await Promise.all(webs.map((w) => healthy(w.name, w.url)));

    // Webhooks on both chains, created through both web processes (the replica's one writes to the primary).
    for (const devnet of devnets) {
      const truth = devnet.truth;
      const addresses: Record<(typeof FILTERS)[number], string> = {
        BUNDLER: mostCommon(truth.userOps.map((o) => o.bundler)),
        PAYMASTER: mostCommon(truth.userOps.map((o) => o.paymaster)),
        FACTORY: mostCommon(truth.accounts.map((a) => a.factory)),
        ADDRESS: mostCommon(truth.userOps.map((o) => o.sender)),
      };
      for (const filter of FILTERS) hooks.push({ chainId: devnet.chainId, filter, address: addresses[filter], id: '', secret: '' });
    }
    // The receiver answers 500 to the first attempt of one body in four (a retry follows, from either
    // dispatcher) and takes up to 60 ms: long enough for two claims of one delivery to overlap.
    const rng = new Random(7);
    const seen = new Set<string>();
    receiver = await startReceiver((_, body) => {
      const first = !seen.has(body);
      seen.add(body);
      return { status: first && seen.size % 4 === 0 ? 500 : 200, delayMs: rng.int(0, 60) };
    });
    for (const [i, hook] of hooks.entries()) {
      const res = await fetch(`${webs[i % 2]!.url}/v0/createWebhook`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          webhookUrl: `${receiver.url}/${hook.filter}`,
          filter: hook.filter,
          identifier: hook.address,
          chainId: hook.chainId,
          apiName: `${hook.filter} on ${hook.chainId}`,
        }),
      });
      const body = (await res.json()) as { webhook: { id: string; secret: string } };
      expect(res.status, `createWebhook ${hook.filter} on ${hook.chainId} through ${webs[i % 2]!.name}: ${JSON.stringify(body)}`).to.equal(
        200,
      );
      Object.assign(hook, { id: body.webhook.id, secret: body.webhook.secret });
    }

    // Two dispatchers, each with its own /metrics.
    for (const name of ['dispatcher-1', 'dispatcher-2']) {
      const port = await freePort();
      start(name, 'webhooks/main.ts', { METRICS_PORT: String(port) });
      dispatcherMetrics.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(dispatcherMetrics.map((url, i) => healthy(`dispatcher-${i + 1}`, url)));

    // An indexer per network, each taking its writer lock; then the standby for devnet, which waits.
    for (const devnet of devnets) {
      const network = networkOf(devnet);
      indexers.set(network, start(`indexer-${network}`, 'indexer/main.ts', { NETWORKS: network }));
      await waitUntil(`indexer-${network} to take its writer lock`, async () => (await lockHolder(devnet.chainId)) !== null, 90_000);
    }
    // The split leaves devnet with its writer: the standby runs no network until that one is gone.
    const standby = start('indexer-devnet-standby', 'indexer/main.ts', { NETWORKS: 'devnet', LOG_LEVEL: 'info' });
    await standby.printed('networks of this process', 90_000);
    indexers.set('standby', standby);
    summary.push(['set-up (engines, 2 chains, 7 processes)', `${((Date.now() - startedAt) / 1000).toFixed(0)} s`]);
  });

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const child of children) console.log(`--- ${child.name} (stderr tail) ---\n${child.stderrTail()}`);
  });

  after(async () => {
    await Promise.all(children.map((c) => c.kill()));
    await receiver?.close();
    await db?.close();
    await Promise.all(devnets.map((d) => d.stop()));
    await redis?.stop();
    await pg?.stop();
    if (summary.length > 0) {
      const width = Math.max(...summary.map(([k]) => k.length));
      console.log(`\nScaled out${REDUCED ? ' (reduced)' : ''}:\n${summary.map(([k, v]) => `| ${k.padEnd(width)} | ${v} |`).join('\n')}`);
    }
  });

  /** The backend pid holding the network's writer lock (a session advisory lock on writerLockKey), or null. */
  async function lockHolder(chainId: number): Promise<number | null> {
    const keyValue = BigInt(writerLockKey(chainId));
    const { rows } = await db!.query<{ pid: number }>(
      `select pid from pg_locks where locktype = 'advisory' and granted and classid = $1::oid and objid = $2::oid and objsubid = 1`,
      [String(keyValue >> 32n), String(keyValue & 0xffffffffn)],
    );
    return rows[0]?.pid ?? null;
  }

  const head = async (devnet: Devnet) => Number(await devnet.rpc.call<string>('eth_blockNumber'));
  const ops = () => devnets.map((d) => `${networkOf(d)} ${d.truth.userOps.length}`).join(', ');

  /** Waits until both chains are indexed to their heads, the replica has replayed it, and both web processes answer the truth of both. */
  async function expectEverywhereTruth(after: string): Promise<void> {
    for (const devnet of devnets) {
      const target = await head(devnet);
      await waitUntil(
        `${networkOf(devnet)} indexed to block ${target} ${after}`,
        async () => (await indexedBlock(db!, devnet.chainId)) >= target,
        120_000,
      );
    }
    await pg!.caughtUp(60_000);
    // The replica's web process first: its reads then reach the replica rather than entries the other one cached.
    for (const web of [...webs].reverse()) {
      for (const devnet of devnets) {
        let difference: string | null = 'not checked yet';
        await waitUntil(
          `${web.name} to answer ${networkOf(devnet)}'s ground truth ${after}`,
          async () => (difference = await apiDifference(web.url, key, devnet.truth)) === null,
          60_000,
        ).catch((err: Error) => {
          throw new Error(`${err.message}: ${difference}`);
        });
      }
    }
  }

  it('indexes both chains, one writer each; both web processes answer the ground truth of both chains', async () => {
    const holders = await Promise.all(CHAIN_IDS.map(lockHolder));
    expect(
      holders.every((pid) => pid !== null),
      'each network has a writer',
    ).to.equal(true);
    await expectEverywhereTruth('after the backfill');
    // The replica web process reads from the replica: with its replay paused, it answers the block
    // the replica has, while the primary's answers move on (it is asked first, so no newer entry is cached).
    const backfilled = ops();
    const devnet2 = devnets[1]!;
    const replayed = await indexedBlock(db!, devnet2.chainId);
    const indexedOf = async (web: Web) =>
      ((await callApi(web.url, key, '/v0/getNetworkStatus?network=devnet2')).body as { indexedBlock: number }).indexedBlock;
    await pg!.pauseReplay();
    try {
      await generate(devnet2, { ops: 5, days: 1, seed: 9 });
      const target = await head(devnet2);
      await waitUntil('devnet2 indexed with the replica paused', async () => (await indexedBlock(db!, devnet2.chainId)) >= target, 60_000);
      expect(await indexedOf(webs[1]!), 'web-replica: indexed block while replay is paused').to.equal(replayed);
      await waitUntil('web-primary to answer the new head', async () => (await indexedOf(webs[0]!)) === target, 10_000);
    } finally {
      await pg!.resumeReplay();
    }
    summary.push([
      'API = ground truth, both web processes, both chains',
      `${backfilled} ops; with the replica's replay paused, web-replica answered its block ${replayed}, web-primary the new head`,
    ]);
  });

  it(`hands devnet to the standby within ${HANDOVER_BOUND_MS / 1000} s when its indexer is SIGKILLed, and indexing goes on to the truth`, async () => {
    const [devnet] = devnets;
    const before = await head(devnet!);
    const killedHolder = await lockHolder(devnet!.chainId);
    const traffic = Promise.all(devnets.map((d, i) => generate(d, { ops: PLAN.during, days: 1, seed: 10 + i })));
    // Killed while following new traffic.
    await waitUntil('the active indexer to index new blocks', async () => (await indexedBlock(db!, devnet!.chainId)) > before, 60_000);
    const killedAt = Date.now();
    await indexers.get('devnet')!.kill('SIGKILL');
    const indexedAtKill = await indexedBlock(db!, devnet!.chainId);
    await waitUntil(
      'the standby to hold the writer lock',
      async () => ![null, killedHolder].includes(await lockHolder(devnet!.chainId)),
      HANDOVER_BOUND_MS + 10_000,
    );
    const handoverMs = Date.now() - killedAt;
    expect(handoverMs, 'SIGKILL → the standby holds the lock (ms)').to.be.at.most(HANDOVER_BOUND_MS);
    await traffic;
    // More traffic once the standby writes: it must index it itself.
    await Promise.all(devnets.map((d, i) => generate(d, { ops: PLAN.after, days: 1, seed: 20 + i })));
    expect(await head(devnet!)).to.be.greaterThan(indexedAtKill);
    await expectEverywhereTruth('after the failover');
    // Exactly once: every op and account announced once in the outbox, wherever the kill cut the batch.
    const { rows } = await db!.query<{ type: string; n: string; distinct_ops: string }>(
      `select type, count(*) as n, count(distinct user_op_hash) as distinct_ops from outbox_events where chain_id = $1 group by type order by type`,
      [devnet!.chainId],
    );
    expect(
      Object.fromEntries(rows.map((r) => [r.type, [Number(r.n), Number(r.distinct_ops)]])),
      'outbox events per type [count, distinct ops]',
    ).to.deep.equal({
      account_deployed: [devnet!.truth.accounts.length, devnet!.truth.accounts.length],
      user_operation: [devnet!.truth.userOps.length, devnet!.truth.userOps.length],
    });
    summary.push([
      'indexer SIGKILLed → standby holds the lock',
      `${(handoverMs / 1000).toFixed(2)} s (bound ${HANDOVER_BOUND_MS / 1000} s); killed at block ${indexedAtKill}, standby indexed to ${await head(devnet!)}; API = truth (${ops()} ops)`,
    ]);
  });

  it('delivers every webhook event at least once, one delivery id per event, never two attempts of one delivery at once, from both dispatchers', async () => {
    const eventOf = (r: Received) => {
      const body = JSON.parse(r.body) as Body;
      return { webhookId: body.webhookId, event: `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}` };
    };
    const truthOf = (hook: Hook) => devnets.find((d) => d.chainId === hook.chainId)!.truth;
    const missing = () =>
      hooks.flatMap((hook) => {
        const delivered = new Set(
          receiver!.received
            .filter((r) => r.status < 300)
            .map(eventOf)
            .filter((e) => e.webhookId === hook.id)
            .map((e) => e.event),
        );
        return [...expectedEvents(truthOf(hook), hook.filter, hook.address)]
          .filter((e) => !delivered.has(e))
          .map((e) => `${hook.filter}@${hook.chainId} ${e}`);
      });
    await waitUntil('every expected event to be delivered', () => missing().length === 0, 180_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${missing().length} missing, e.g. ${missing().slice(0, 3).join(', ')}`);
    });
    const received = receiver!.received;
    for (const r of received) verifySignature(hooks.find((h) => h.id === eventOf(r).webhookId)!.secret, r);

    // One delivery (one webhook-id) per (webhook, event); its attempts one after another.
    const idsPerEvent = new Map<string, Set<string>>();
    const attemptsPerId = new Map<string, Received[]>();
    for (const r of received) {
      const { webhookId, event } = eventOf(r);
      const id = String(r.headers['webhook-id']);
      idsPerEvent.set(`${webhookId} ${event}`, (idsPerEvent.get(`${webhookId} ${event}`) ?? new Set()).add(id));
      attemptsPerId.set(id, [...(attemptsPerId.get(id) ?? []), r]);
    }
    expect(
      [...idsPerEvent].filter(([, ids]) => ids.size > 1).map(([event]) => event),
      'events with more than one delivery id',
    ).to.deep.equal([]);
    const overlapping = [...attemptsPerId].filter(([, attempts]) => {
      const sorted = [...attempts].sort((a, b) => a.startedAt - b.startedAt);
      return sorted.some((a, i) => i > 0 && a.startedAt < sorted[i - 1]!.at);
    });
    expect(
      overlapping.map(([id]) => id),
      'deliveries with two attempts in flight at once',
    ).to.deep.equal([]);
    const retried = [...attemptsPerId.values()].filter((attempts) => attempts.length > 1).length;
    expect(retried, 'deliveries retried after a 500').to.be.greaterThan(0);

    // Both dispatchers sent (each counts the attempts it recorded).
    const sent = await Promise.all(
      dispatcherMetrics.map(async (url) =>
        Number(/^opscan_dispatcher_attempts_total (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0),
      ),
    );
    expect(
      sent.every((n) => n > 0),
      `attempts per dispatcher ${sent.join(', ')}`,
    ).to.equal(true);
    const { rows } = await db!.query<{ deadlocks: string }>('select deadlocks from pg_stat_database where datname = current_database()');
    // Every request a receiver got was recorded by the dispatcher that sent it: no batch lost to a deadlock.
    expect(
      sent.reduce((a, b) => a + b, 0),
      'attempts recorded by the dispatchers = requests received',
    ).to.equal(received.length);
    expect(Number(rows[0]!.deadlocks), 'deadlocks between the dispatchers').to.equal(0);
    summary.push([
      'webhook deliveries (8 webhooks, 2 chains)',
      `${attemptsPerId.size} deliveries, every expected event delivered; ${received.length} requests (${sent.join(' + ')} recorded by the dispatchers), ${retried} retried after a 500; 0 overlapping, 0 duplicate ids; ${rows[0]!.deadlocks} deadlocks in PostgreSQL`,
    ]);
  });
});

function networkOf(devnet: Devnet): string {
  return findNetworkByChainId(devnet.chainId)!.name;
}
