import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import { decideTtl, jitter } from '../../server/cache/cachePolicy.js';
import type { Deps } from '../../server/context.js';
import { createIndexerView } from '../../server/indexerView.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import type { IndexerState } from '../../shared/db/tables/indexerState.js';
import { bytea } from '../../shared/db/client.js';
import { testConfig, testDeps } from '../helpers/app.js';
import { keepUserOpRow } from '../helpers/db.js';
import { TEST_REDIS_URL, useTestRedis } from '../helpers/redis.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('response cache', () => {
  const d = useIndexedDevnet({ ops: 60, seed: 2 });
  const redis = useTestRedis();
  const opened: Deps[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((deps) => deps.services.close()));
  });

  /** An app on the devnet data; recent blocks are unfinalised (depth 5) so reorgs matter. */
  async function appWith(env: Record<string, string> = {}) {
    const deps = testDeps(d.db, { RATE_LIMIT_PER_SECOND: '100000', FINALITY_DEPTH_DEVNET: '5', ...env });
    opened.push(deps);
    await deps.services.ready();
    const app = createApp(deps);
    return {
      deps,
      get: (name: string, query: Record<string, unknown>) => request(app).get(`/v0/${name}`).query(query).set('x-api-key', d.key),
    };
  }

  const stores: Array<[string, () => Record<string, string>]> = [['in-process', () => ({})]];
  if (TEST_REDIS_URL) stores.push(['redis', () => ({ REDIS_URL: TEST_REDIS_URL!, REDIS_KEY_PREFIX: redis.prefix })]);

  for (const [storeName, storeEnv] of stores) {
    describe(`with the ${storeName} store`, () => {
      it('answers a repeated request from the cache, keyed by the normalised input', async () => {
        const { deps, get } = await appWith(storeEnv());
        expect(deps.services.cache.kind).to.equal(storeName === 'redis' ? 'redis' : 'memory');
        const sender = d.truth.userOps[0]!.sender;
        const first = await get('getAddressActivity', { address: sender, network: 'devnet', first: 4 });
        expect(first.headers['x-cache']).to.equal('miss');
        const again = await get('getAddressActivity', {
          address: sender.toUpperCase().replace('0X', '0x'),
          network: 'Devnet',
          first: '4',
          skip: '0',
        });
        expect(again.headers['x-cache']).to.equal('hit');
        expect(again.body).to.deep.equal(first.body);
        expect(again.headers['cache-control']).to.match(/^private, max-age=\d+$/);
        expect(deps.services.cache.stats).to.deep.include({ hits: 1, misses: 1, errors: 0 });
      });

      it('drops unfinalised answers when the reorg epoch changes, and final ones when the final epoch does', async () => {
        const ops = [...d.truth.userOps].sort((a, b) => a.blockNumber - b.blockNumber);
        const oldOp = ops[0]!;
        const recentOp = ops[ops.length - 1]!;
        // The oldest op is exactly at the finality depth, the newest within the reorg window.
        const depth = String(recentOp.blockNumber - oldOp.blockNumber);
        const { deps, get } = await appWith({ ...storeEnv(), FINALITY_DEPTH_DEVNET: depth });
        // Unfinalised entries live about one block (1 s on devnet): read the epoch on every request
        // so the reorg is seen before they expire on their own.
        deps.services.indexer = createIndexerView(deps.db, deps.config.networks, { log: deps.log, maxAgeMs: 0 });
        for (const op of [oldOp, recentOp]) expect((await get('getUserOp', { hash: op.userOpHash })).headers['x-cache']).to.equal('miss');
        // A reorg: the indexer deletes the replaced block's rows and bumps the epoch in one transaction.
        const saved = await keepUserOpRow(d.db, recentOp.userOpHash);
        await d.db.transaction(async (tx) => {
          await tx.query(`delete from user_ops where user_op_hash = $1`, [bytea(recentOp.userOpHash)]);
          await tx.query(`update indexer_state set reorg_epoch = reorg_epoch + 1 where chain_id = 31337`);
        });
        try {
          const recent = await get('getUserOp', { hash: recentOp.userOpHash });
          expect(recent.headers['x-cache']).to.equal('miss');
          expect(recent.body.userOps).to.deep.equal([]);
          const old = await get('getUserOp', { hash: oldOp.userOpHash });
          expect(old.headers['x-cache']).to.equal('hit');
          expect(deps.services.cache.stats.stale).to.equal(1);
          // A reorg that removed blocks held final: final answers are computed again.
          await d.db.query(`update indexer_state set final_epoch = final_epoch + 1 where chain_id = 31337`);
          expect((await get('getUserOp', { hash: oldOp.userOpHash })).headers['x-cache']).to.equal('miss');
          expect((await get('getUserOp', { hash: oldOp.userOpHash })).headers['x-cache']).to.equal('hit');
        } finally {
          await saved.restore();
        }
      });

      it('stops serving a head-dependent answer once the indexer NOTIFYs a new head, before its TTL', async function () {
        const { deps, get } = await appWith(storeEnv());
        const query = { network: 'devnet', first: 3 };
        const started = Date.now();
        expect((await get('getLatestUserOps', query)).headers['x-cache']).to.equal('miss');
        expect((await get('getLatestUserOps', query)).headers['x-cache']).to.equal('hit');
        const [state] = await indexerState.listByChainIds(d.db, [31337]);
        const { rows } = await d.db.query<{ indexed_block_hash: string }>(
          'select indexed_block_hash from indexer_state where chain_id = 31337',
        );
        const cursor = {
          chainId: 31337,
          indexedBlockHash: rows[0]!.indexed_block_hash,
          headBlock: state!.headBlock,
          backfillComplete: true,
        };
        // The indexer commits the next block (an empty one): its cursor move is NOTIFYd on commit.
        await d.db.transaction((tx) => indexerState.updateCursor(tx, { ...cursor, indexedBlock: state!.indexedBlock + 1 }));
        const movedAt = Date.now();
        try {
          // The entry lives about one block (1 s on devnet, -10 % at worst) and the view rereads on
          // a 1 s timer: a miss within 700 ms of the fill comes from the NOTIFY.
          if (movedAt - started > 200) this.skip(); // too loaded a machine to tell
          let cache: unknown = 'hit';
          while (cache === 'hit' && Date.now() - movedAt < 500) {
            await sleep(10);
            cache = (await get('getLatestUserOps', query)).headers['x-cache'];
          }
          expect(cache).to.equal('miss');
          expect(deps.services.cache.stats.stale).to.equal(1);
          expect((await deps.services.indexer.current()).get(31337)?.indexedBlock).to.equal(state!.indexedBlock + 1);
        } finally {
          await indexerState.updateCursor(d.db, { ...cursor, indexedBlock: state!.indexedBlock });
        }
      });

      it('computes concurrent misses of one key once (single flight)', async () => {
        const { deps } = await appWith(storeEnv());
        let listQueries = 0;
        const counting: Deps = {
          ...deps,
          db: {
            ...deps.db,
            query: (text: string, values?: readonly unknown[]) => {
              if (text.includes('from user_ops where chain_id = $1\n')) listQueries++;
              return deps.db.query(text, values);
            },
          },
        };
        const app = createApp(counting);
        const burst = await Promise.all(
          Array.from({ length: 20 }, () =>
            request(app).get('/v0/getLatestUserOps').query({ network: 'devnet', first: 7 }).set('x-api-key', d.key),
          ),
        );
        expect(burst.every((r) => r.status === 200 && r.body.userOps.length === 7)).to.equal(true);
        expect(listQueries).to.equal(1);
      });
    });
  }

  it('keeps answering from Postgres, with no errors to callers, when Redis is down', async () => {
    // A closed local port: every Redis command fails at once.
    const { deps, get } = await appWith({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: redis.prefix });
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const res = await get('getLatestUserOps', { network: 'devnet', first: 3 });
      expect(res.status).to.equal(200);
      expect(res.body.userOps).to.have.length(3);
      expect(Date.now() - started).to.be.lessThan(1000);
    }
    // Every Redis read failed (counted), and the answers came from Postgres (or the near cache).
    expect(deps.services.cache.stats.errors).to.be.greaterThan(0);
  });

  it('shares entries between web processes through Redis', async function () {
    if (!TEST_REDIS_URL) this.skip();
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `${redis.prefix}shared:` };
    const a = await appWith(env);
    const b = await appWith(env);
    expect((await a.get('getTopPaymasters', { network: 'devnet' })).headers['x-cache']).to.equal('miss');
    await sleep(50); // the write is not awaited by the answer
    expect((await b.get('getTopPaymasters', { network: 'devnet' })).headers['x-cache']).to.equal('hit');
  });

  it('exposes hit and miss counts at /metrics', async () => {
    const { deps, get } = await appWith();
    await get('getGlobalCounts', { network: 'devnet' });
    await get('getGlobalCounts', { network: 'devnet' });
    const res = await request(createApp(deps)).get('/metrics');
    expect(res.status).to.equal(200);
    expect(res.text).to.include('opscan_cache_requests_total{store="memory",outcome="hit"} 1');
    expect(res.text).to.include('opscan_cache_requests_total{store="memory",outcome="miss"} 1');
    const guarded = await appWith({ METRICS_TOKEN: 'a-token-long-enough-123' });
    expect((await request(createApp(guarded.deps)).get('/metrics')).status).to.equal(401);
    expect((await request(createApp(guarded.deps)).get('/metrics').set('authorization', 'Bearer a-token-long-enough-123')).status).to.equal(
      200,
    );
  });
});

describe('cache policy', () => {
  const networks = testConfig({ FINALITY_DEPTH_DEVNET: '10' }).networks;
  const states = new Map<number, IndexerState>([
    [
      31337,
      {
        chainId: 31337,
        network: 'devnet',
        startBlock: 0,
        indexedBlock: 100,
        headBlock: 100,
        backfillComplete: true,
        reorgEpoch: 3,
        finalEpoch: 0,
        writeFailure: null,
      },
    ],
  ]);
  const context = { networks, states, finalTtlMs: 86_400_000 };
  const policy = {
    finalWhen: (out: { block: number | null }) => (out.block === null ? [] : [{ network: 'devnet', blockNumber: out.block }]),
  };

  it('keeps answers about blocks past the finality depth long, and the rest about one block', () => {
    expect(decideTtl(policy, { block: 90 }, {}, context)).to.deep.equal({ final: true, ttlMs: 86_400_000 });
    expect(decideTtl(policy, { block: 91 }, {}, context)).to.deep.equal({ final: false, ttlMs: 1000 });
    expect(decideTtl(policy, { block: null }, {}, context)).to.deep.equal({ final: false, ttlMs: 1000 });
    expect(decideTtl('head', {}, {}, context)).to.deep.equal({ final: false, ttlMs: 1000 });
    expect(decideTtl('live', {}, {}, context)).to.deep.equal({ final: true, ttlMs: 1000 });
  });

  it('jitters TTLs by ±10 %', () => {
    const ttls = Array.from({ length: 500 }, () => jitter(10_000));
    expect(Math.min(...ttls)).to.be.at.least(9000);
    expect(Math.max(...ttls)).to.be.at.most(11_000);
    expect(new Set(ttls).size).to.be.greaterThan(100);
  });
});
