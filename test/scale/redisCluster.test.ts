/**
 * The cache and the rate limiter on a real 3-master Redis Cluster started here
 * (test/helpers/redisCluster.ts), including a master killed under load.
 */
import { expect } from 'chai';
import request from 'supertest';
import { Redis } from 'ioredis';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { redisServerAvailable, startRedisCluster, type RedisCluster } from '../helpers/redisCluster.js';
import { useIndexedDevnet } from '../server/support/indexedDevnet.js';

describe('Redis Cluster (a real 3-master cluster)', function () {
  this.timeout(300_000);
  const d = useIndexedDevnet({ ops: 30, seed: 11 });
  let cluster: RedisCluster | undefined;
  const opened: Deps[] = [];

  before(async function () {
    if (!(await redisServerAvailable())) {
      console.log('      skipped: redis-server / redis-cli are not installed');
      this.skip();
    }
    cluster = await startRedisCluster();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((deps) => deps.services.close()));
  });
  after(async () => {
    await cluster?.stop();
  });

  async function webWith(env: Record<string, string> = {}) {
    const deps = testDeps(d.db, {
      REDIS_URL: cluster!.url,
      REDIS_KEY_PREFIX: 'opscan_t_cluster:',
      RATE_LIMIT_PER_SECOND: '1000000',
      FINALITY_DEPTH_DEVNET: '5',
      ...env,
    });
    opened.push(deps);
    await deps.services.ready();
    const app = createApp(deps);
    return {
      deps,
      get: (name: string, query: Record<string, unknown>, key = d.key) =>
        request(app).get(`/v0/${name}`).query(query).set('x-api-key', key),
    };
  }

  /**
   * Keys under `prefix` on each master, asked of each server directly: a cluster client's view of the
   * topology can lag (once in CI it named one master), and where the keys really are is the point.
   */
  async function keysPerMaster(prefix: string): Promise<number[]> {
    return Promise.all(
      cluster!.ports.map(async (port) => {
        const client = new Redis({ host: '127.0.0.1', port });
        try {
          return (await client.keys(`${prefix}*`)).length;
        } finally {
          client.disconnect();
        }
      }),
    );
  }

  /** A spread of distinct requests whose answers are final or head-dependent, with their answers from Postgres alone. */
  function requests() {
    const ops = d.truth.userOps;
    return [
      ...ops.slice(0, 12).map((op) => ['getUserOp', { hash: op.userOpHash }] as const),
      ...[...new Set(ops.map((op) => op.sender))]
        .slice(0, 8)
        .map((sender) => ['getAddressActivity', { address: sender, network: 'devnet', first: 5 }] as const),
      ...[1, 2, 3, 4, 5, 6].map((first) => ['getLatestUserOps', { network: 'devnet', first }] as const),
    ];
  }

  it('caches across web processes with entries spread over the masters; seeds as redis-cluster:// or REDIS_CLUSTER=true', async () => {
    const a = await webWith();
    const b = await webWith({ REDIS_CLUSTER: 'true', REDIS_URL: `redis://127.0.0.1:${cluster!.ports[1]}` });
    expect(a.deps.services.cache.kind).to.equal('redis');
    for (const [name, query] of requests()) {
      const first = await a.get(name, query);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const second = await b.get(name, query);
      expect(second.headers['x-cache'], `${name} ${JSON.stringify(query)}`).to.equal('hit');
      expect(second.body).to.deep.equal(first.body);
    }
    expect(a.deps.services.cache.stats.errors + b.deps.services.cache.stats.errors).to.equal(0);
    const perMaster = await keysPerMaster('opscan_t_cluster:cache:');
    expect(perMaster.filter((n) => n > 0)).to.have.length(3);
    // Each rate-limit bucket is one hash-tagged key: one slot, one node, whatever the script touches.
    const buckets = await keysPerMaster('opscan_t_cluster:rl:');
    expect(buckets.reduce((x, y) => x + y, 0)).to.be.greaterThan(0);
  });

  it("keeps one key's rate limit across two web processes on the cluster", async () => {
    const env = { REDIS_KEY_PREFIX: 'opscan_t_cluster:limits:', RATE_LIMIT_PER_SECOND: '5' };
    const a = await webWith(env);
    const b = await webWith(env);
    const key = await createTestKey(d.db, 'cluster-limited', 5);
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).get('getNetworks', {}, key).then((r) => r.status)),
    );
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).to.deep.equal([]);
    // The bucket holds 5/s plus its burst reserve (about 3 × 5): well under the 60 asked, shared by both.
    expect(admitted).to.be.greaterThan(0).and.at.most(25);
  });

  it('answers every request correctly while a master is killed under load and after it returns: misses, not errors', async () => {
    const reference = await webWith({ REDIS_URL: '' });
    const all = requests();
    const expected = await Promise.all(all.map(async ([name, query]) => (await reference.get(name, query)).body));
    const webs = [
      await webWith({ REDIS_KEY_PREFIX: 'opscan_t_cluster:load:' }),
      await webWith({ REDIS_KEY_PREFIX: 'opscan_t_cluster:load:' }),
    ];
    const failures: string[] = [];
    let done = 0;
    const TOTAL = 1200;
    const KILL_AT = 300;
    let killed = false;
    let next = 0;
    const worker = async () => {
      while (next < TOTAL) {
        const i = next++;
        const [name, query] = all[i % all.length]!;
        const res = await webs[i % 2]!.get(name, query);
        if (res.status !== 200) failures.push(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
        else if (JSON.stringify(res.body) !== JSON.stringify(expected[i % all.length])) failures.push(`${name}: wrong answer`);
        if (++done >= KILL_AT && !killed) {
          killed = true;
          cluster!.kill(1);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(killed).to.equal(true);
    expect(failures).to.deep.equal([]);
    // The dead master's slots failed as cache errors (counted, answered from Postgres).
    expect(webs[0]!.deps.services.cache.stats.errors + webs[1]!.deps.services.cache.stats.errors).to.be.greaterThan(0);

    await cluster!.restart(1);
    // Once the clients see the node again, entries are stored on every master again.
    const deadline = Date.now() + 20_000;
    for (;;) {
      for (const [name, query] of all) expect((await webs[0]!.get(name, query)).status).to.equal(200);
      const perMaster = await keysPerMaster('opscan_t_cluster:load:cache:');
      if (perMaster.every((n) => n > 0)) break;
      if (Date.now() > deadline)
        throw new Error(`the returned master never stored entries again (keys per master: ${perMaster.join(', ')})`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const hits = await Promise.all(all.map(async ([name, query]) => (await webs[1]!.get(name, query)).headers['x-cache']));
    expect(hits.filter((h) => h === 'hit').length).to.be.greaterThan(all.length / 2);
  });
});
