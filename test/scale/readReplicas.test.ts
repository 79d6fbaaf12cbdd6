/**
 * Read replicas against a real streaming replica: a private primary and a `pg_basebackup -R`
 * standby of it, started and removed here (test/helpers/pgReplica.ts).
 */
import { expect } from 'chai';
import request from 'supertest';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer } from '../../indexer/index.js';
import { createApp } from '../../server/app.js';
import { createMemoryStore, createRedisStore } from '../../server/cache/cacheStore.js';
import { createResponseCache } from '../../server/cache/responseCache.js';
import type { Deps } from '../../server/context.js';
import { createIndexerView } from '../../server/indexerView.js';
import { createRedis } from '../../server/redis.js';
import { bytea, type Db } from '../../shared/db/client.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { keepUserOpRow } from '../helpers/db.js';
import { freePort } from '../helpers/freePort.js';
import { createMigratedDatabase, postgresServerBinaries, startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/pgReplica.js';
import { TEST_REDIS_URL, useTestRedis } from '../helpers/redis.js';
import { devnetConfig, eventually, indexedBlock, quietLogger } from '../indexer/support.js';

const CHAIN_ID = 31337;

describe('read replicas (a real streaming replica)', function () {
  this.timeout(300_000);
  const redis = useTestRedis();
  let cluster: ReplicatedPostgres | undefined;
  let db: Db;
  let devnet: Devnet | undefined;
  let key = '';
  const opened: Deps[] = [];

  before(async function () {
    if (!postgresServerBinaries()) {
      console.log('      skipped: the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) are not installed; set PG_BIN');
      this.skip();
    }
    cluster = await startReplicatedPostgres();
    db = await createMigratedDatabase(cluster);
    devnet = await startDevnet();
    await generate(devnet, { ops: 12, seed: 3 });
    await indexAll();
    key = await createTestKey(db, 'replica-tests', 1_000_000);
    await cluster.caughtUp();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((deps) => deps.services.close()));
  });

  after(async () => {
    await devnet?.stop();
    await db?.close();
    await cluster?.stop();
  });

  async function indexAll() {
    const indexer = startIndexer({ db, config: devnetConfig(devnet!.rpcUrl), log: quietLogger() });
    try {
      await indexer.syncNow();
    } finally {
      await indexer.stop();
    }
  }

  /** A web process on the primary with DATABASE_READ_URL naming the replica (unless `env` says otherwise). */
  async function webWith(env: Record<string, string> = {}) {
    const deps = testDeps(db, {
      RATE_LIMIT_PER_SECOND: '1000000',
      FINALITY_DEPTH_DEVNET: '10000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      DATABASE_READ_URL: cluster!.replicaUrl('opscan'),
      ...env,
    });
    opened.push(deps);
    await deps.services.ready();
    const app = createApp(deps);
    const get = (name: string, query: Record<string, unknown> = {}, apiKey = key) =>
      request(app).get(`/v0/${name}`).query(query).set('x-api-key', apiKey);
    const latestHashes = async (first = 100) => {
      const res = await get('getLatestUserOps', { network: 'devnet', first });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return (res.body.userOps as Array<{ userOpHash: string }>).map((o) => o.userOpHash).sort();
    };
    const statusHead = async () => (await get('getNetworkStatus', { network: 'devnet' })).body.indexedBlock as number;
    /** The head GraphQL's `_meta` answers, and how many user ops its first page holds. */
    const graphqlView = async () => {
      const res = await request(app)
        .post('/subgraphs/name/devnet')
        .set('x-api-key', key)
        .send({ query: '{ _meta { block { number } } userOps(first: 1000) { id } }' });
      expect(res.body.errors, JSON.stringify(res.body)).to.equal(undefined);
      return { head: Number(res.body.data._meta.block.number), ops: (res.body.data.userOps as unknown[]).length };
    };
    return { deps, app, get, latestHashes, statusHead, graphqlView };
  }

  const truthHashes = () => devnet!.truth.userOps.map((o) => o.userOpHash).sort();

  it('reads from the replica under the state it has replayed; webhooks and keys stay on the primary', async () => {
    const web = await webWith({ READ_REPLICA_MAX_LAG_SECONDS: '3600' });
    expect(web.deps.services.readReplicas!.replicas.map((r) => r.usable)).to.deep.equal([true]);
    const before = truthHashes();
    expect(await web.latestHashes()).to.deep.equal(before);
    const replayedHead = await web.statusHead();

    await cluster!.pauseReplay();
    try {
      await generate(devnet!, { ops: 4, seed: 4 });
      await indexAll();
      expect(await indexedBlock(db, CHAIN_ID)).to.be.greaterThan(replayedHead);
      // The replica has not replayed the new blocks: answers, and the head they are tagged with, are its own.
      await new Promise((r) => setTimeout(r, 1100)); // past the indexer view's 1 s memory, so a fresh read is made
      expect(await web.statusHead()).to.equal(replayedHead);
      expect(await web.latestHashes(99)).to.deep.equal(before);
      // GraphQL reads the same replica: its `_meta` head and its rows are the replica's too.
      expect(await web.graphqlView()).to.deep.equal({ head: replayedHead, ops: before.length });

      // What a caller writes it reads back at once, replica or not.
      const created = await request(web.app).post('/v0/createWebhook').set('x-api-key', key).send({
        webhookUrl: 'http://127.0.0.1:9/hook',
        filter: 'ADDRESS',
        identifier: devnet!.truth.userOps[0]!.sender,
        chainId: CHAIN_ID,
        apiName: 'replica test',
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      const listed = await web.get('listWebhooks');
      expect(listed.body.webhooks.map((w: { id: string }) => w.id)).to.include(created.body.webhook.id);
      const freshKey = await createTestKey(db, 'made-while-replica-paused', 1_000_000);
      expect((await web.get('getNetworks', {}, freshKey)).status).to.equal(200);
    } finally {
      await cluster!.resumeReplay();
    }
    await cluster!.caughtUp();
    await eventually(async () => (await web.latestHashes(98)).length === truthHashes().length, 10_000, 'the replica to serve the new ops');
    expect(await web.latestHashes(97)).to.deep.equal(truthHashes());
  });

  it('skips a replica lagging more than READ_REPLICA_MAX_LAG_SECONDS, and takes it back once caught up', async () => {
    const web = await webWith({ READ_REPLICA_MAX_LAG_SECONDS: '1' });
    const replica = web.deps.services.readReplicas!.replicas[0]!;
    expect(replica.usable).to.equal(true);
    await cluster!.pauseReplay();
    try {
      await generate(devnet!, { ops: 3, seed: 5 });
      await indexAll();
      await eventually(async () => !replica.usable, 15_000, 'the lagging replica to be skipped');
      expect(replica.lagSeconds).to.be.greaterThan(1);
      // Answers come from the primary meanwhile: the new ops and the primary's head.
      expect(await web.latestHashes()).to.deep.equal(truthHashes());
      expect(await web.statusHead()).to.equal(await indexedBlock(db, CHAIN_ID));
    } finally {
      await cluster!.resumeReplay();
    }
    await eventually(async () => replica.usable, 15_000, 'the replica back in rotation');
    expect(await web.latestHashes(96)).to.deep.equal(truthHashes());
  });

  it('falls back to another replica or the primary when one disappears, and uses it again when back', async () => {
    const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/opscan`;
    const web = await webWith({ DATABASE_READ_URL: `${nowhere},${cluster!.replicaUrl('opscan')}` });
    const [gone, live] = web.deps.services.readReplicas!.replicas;
    expect([gone!.usable, live!.usable]).to.deep.equal([false, true]);
    expect(await web.latestHashes(95)).to.deep.equal(truthHashes());

    await cluster!.killReplica();
    try {
      // Before any check has noticed: the call fails over inside the request.
      for (const first of [94, 93, 92]) expect(await web.latestHashes(first)).to.deep.equal(truthHashes());
      expect(live!.usable).to.equal(false);
      expect((await web.get('getNetworkStatus', { network: 'devnet' })).status).to.equal(200);
    } finally {
      await cluster!.startReplica();
    }
    await eventually(async () => live!.usable, 20_000, 'the restarted replica back in rotation');
    expect(await web.latestHashes(91)).to.deep.equal(truthHashes());
    expect(gone!.usable).to.equal(false);
  });

  it('never replaces a cached answer with one computed from an older state: a replica behind a reorg answers the newer entry', async function () {
    if (!TEST_REDIS_URL) this.skip();
    const shared = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `${redis.prefix}reorg:` };
    const onPrimary = await webWith({ ...shared, DATABASE_READ_URL: '' });
    const onReplica = await webWith({ ...shared, READ_REPLICA_MAX_LAG_SECONDS: '3600' });
    // The primary's web process sees the reorg at once.
    onPrimary.deps.services.indexer = createIndexerView(db, onPrimary.deps.config.networks, { log: onPrimary.deps.log, maxAgeMs: 0 });
    const newest = [...devnet!.truth.userOps].sort((a, b) => b.blockNumber - a.blockNumber)[0]!;
    await cluster!.caughtUp();
    await cluster!.pauseReplay();
    const saved = await keepUserOpRow(db, newest.userOpHash);
    try {
      // A reorg replaces the newest op's block: the indexer deletes its rows and bumps the epoch in one transaction.
      await db.transaction(async (tx) => {
        await tx.query(`delete from user_ops where user_op_hash = $1`, [bytea(newest.userOpHash)]);
        await tx.query(`update indexer_state set reorg_epoch = reorg_epoch + 1 where chain_id = $1`, [CHAIN_ID]);
      });
      const fromPrimary = await onPrimary.latestHashes(50);
      expect(fromPrimary).to.not.include(newest.userOpHash);
      // The replica has not replayed the reorg: its own answer would still list the op, under the old epoch.
      const fromReplica = await onReplica.latestHashes(50);
      expect(fromReplica).to.deep.equal(fromPrimary);
      expect(onReplica.deps.services.cache.stats.superseded).to.equal(1);
      // The primary's entry is still the one stored: its next call is a hit.
      const again = await onPrimary.get('getLatestUserOps', { network: 'devnet', first: 50 });
      expect(again.headers['x-cache']).to.equal('hit');
    } finally {
      await cluster!.resumeReplay();
      await saved.restore();
      await cluster!.caughtUp();
    }
  });

  describe('cache entries carry the heads they were computed at', () => {
    const stores: Array<[string, () => Promise<ReturnType<typeof createMemoryStore>>]> = [['in-process', async () => createMemoryStore()]];
    const clients: Array<ReturnType<typeof createRedis>> = [];
    after(() => clients.forEach((c) => c.disconnect()));
    if (TEST_REDIS_URL) {
      stores.push([
        'redis',
        async () => {
          const client = createRedis(TEST_REDIS_URL!, quietLogger());
          clients.push(client);
          await new Promise((resolve) => client.once('ready', resolve));
          return createRedisStore(client, `${redis.prefix}heads:`);
        },
      ]);
    }
    for (const [storeName, makeStore] of stores) {
      it(`keeps the newer of two fills (${storeName} store)`, async () => {
        const cache = createResponseCache(await makeStore(), quietLogger());
        const fill = (key: string, heads: string, epoch = 'e0.0') =>
          cache.fill(key, { epoch, heads, final: 'f0.0' }, async () => ({ value: { heads }, final: false, ttlMs: 60_000 }));
        const body = async (answer: Promise<{ json?: Buffer; value?: unknown }>) => {
          const a = await answer;
          return a.json ? JSON.parse(a.json.toString()) : a.value;
        };
        expect(await body(fill('k', 'h10.20'))).to.deep.equal({ heads: 'h10.20' });
        // One block behind on one network, level on the other: refused, answered with the stored entry.
        expect(await body(fill('k', 'h10.19'))).to.deep.equal({ heads: 'h10.20' });
        expect(cache.stats.superseded).to.equal(1);
        // Ahead on one network: replaces it; a newer reorg epoch wins over a higher block.
        expect(await body(fill('k', 'h11.20'))).to.deep.equal({ heads: 'h11.20' });
        expect(await body(fill('k', 'h5.20', 'e1.0'))).to.deep.equal({ heads: 'h5.20' });
        expect(await body(fill('k', 'h11.20', 'e0.0'))).to.deep.equal({ heads: 'h5.20' });
        expect(cache.stats.superseded).to.equal(2);
      });
    }
  });
});
