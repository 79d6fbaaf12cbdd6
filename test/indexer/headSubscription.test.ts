/**
 * Following the head over a WebSocket (eth_subscribe newHeads), on a real anvil through a proxy
 * the test can cut or make drop announcements, into real PostgreSQL: a block is indexed as soon as
 * it is announced (the poll is set a minute apart, so nothing else could have), the subscription
 * comes back after its socket is dropped or goes silent, heads it missed are filled by polling, and a
 * reorg announced over it is repaired.
 */
import { expect } from 'chai';
import { register } from 'prom-client';
import request from 'supertest';
import { generate, reorg, startContinuous, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer, type Indexer, type IndexerTuning } from '../../indexer/index.js';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { startWsProxy, type WsProxy } from '../helpers/wsProxy.js';
import { expectMatchesTruth } from './storedTruth.js';
import { devnetConfig, eventually, indexedBlock, quietLogger } from './support.js';

/** Long enough that whatever is indexed within a test was indexed because it was announced. */
const NO_POLL_MS = '60000';

/** opscan_indexer_heads_total of the devnet, by source. */
async function heads(source: 'subscription' | 'poll'): Promise<number> {
  const metric = await register.getSingleMetric('opscan_indexer_heads_total')?.get();
  return metric?.values.find((v) => v.labels.network === 'devnet' && v.labels.source === source)?.value ?? 0;
}

describe('indexer head subscription (newHeads over WebSocket)', function () {
  this.timeout(300_000);
  const t = useTestDb();
  let devnet: Devnet;
  let proxy: WsProxy;
  let deps: Deps;
  let key: string;
  let indexer: Indexer | undefined;

  before(async () => {
    devnet = await startDevnet();
    await generate(devnet, { ops: 20, days: 1, seed: 11 });
    proxy = await startWsProxy({ host: '127.0.0.1', port: devnet.port });
    deps = testDeps(t.db, { RATE_LIMIT_PER_SECOND: '100000' });
    key = await createTestKey(t.db);
  });

  afterEach(async () => {
    await indexer?.stop();
    indexer = undefined;
    proxy.dropAnnouncements = false;
    proxy.restore();
  });

  after(async () => {
    await deps?.services.close();
    await proxy?.close();
    await devnet?.stop();
  });

  /** Starts the indexer on the devnet, subscribed through the proxy, and waits for it to reach the head. */
  async function follow(pollIntervalMs: string, tuning: Partial<IndexerTuning> = {}): Promise<Indexer> {
    const subscribed = proxy.replies;
    indexer = startIndexer({
      db: t.db,
      config: devnetConfig(devnet.rpcUrl, { RPC_WS_URL_DEVNET: proxy.url, INDEXER_POLL_INTERVAL_MS: pollIntervalMs }),
      log: quietLogger(),
      tuning,
    });
    await indexer.syncNow();
    await eventually(async () => proxy.replies > subscribed, 10_000, 'the newHeads subscription');
    return indexer;
  }

  /** Mines one block of new ops (the devnet's live traffic, one tick); returns their hashes. */
  async function mineOps(): Promise<string[]> {
    const before = devnet.truth.userOps.length;
    await new Promise<void>((resolve, reject) => {
      const traffic = startContinuous(devnet, {
        intervalMs: 1,
        opsPerTick: 2,
        seed: before,
        onTick: () => void traffic.stop().then(resolve),
        onError: reject,
      });
    });
    const hashes = devnet.truth.userOps.slice(before).map((o) => o.userOpHash);
    expect(hashes).to.not.have.length(0);
    return hashes;
  }

  const answered = async (hash: string): Promise<boolean> => {
    const res = await request(createApp(deps)).get('/v0/getUserOp').query({ hash }).set('x-api-key', key);
    return res.status === 200 && (res.body as { userOps: unknown[] }).userOps.length === 1;
  };

  const head = async (): Promise<number> => Number(await devnet.rpc.call<string>('eth_blockNumber'));

  it('indexes a block as soon as it is announced: its ops are answered by the API long before the next poll', async () => {
    await follow(NO_POLL_MS);
    const announcedBefore = await heads('subscription');
    const hashes = await mineOps();
    const minedAt = Date.now();
    for (const hash of hashes) await eventually(() => answered(hash), 5_000, `getUserOp ${hash} answered`);
    expect(Date.now() - minedAt).to.be.lessThan(5_000);
    expect(proxy.announcements).to.be.greaterThan(0);
    expect(await heads('subscription')).to.be.greaterThan(announcedBefore);
  });

  it('subscribes again after its socket is dropped, and indexes what was mined meanwhile', async () => {
    await follow(NO_POLL_MS);
    const connections = proxy.connections;
    proxy.cut();
    const duringOutage = await mineOps();
    await new Promise((r) => setTimeout(r, 1_000));
    proxy.restore();
    // Back-off from 250 ms: the next attempt is due within about 2 s.
    await eventually(async () => proxy.connections > connections, 10_000, 'a new connection');
    for (const hash of duringOutage) await eventually(() => answered(hash), 10_000, `getUserOp ${hash} answered`);
    const afterwards = await mineOps();
    for (const hash of afterwards) await eventually(() => answered(hash), 5_000, `getUserOp ${hash} answered`);
    expect(await indexedBlock(t.db, devnet.chainId)).to.equal(await head());
  });

  it('gives up on a socket that went silent without closing, subscribes again, and indexes what was mined meanwhile', async () => {
    await follow(NO_POLL_MS, { wsKeepAliveMs: 300 });
    const connections = proxy.connections;
    proxy.silenceOpen();
    const meanwhile = await mineOps();
    // Silent since the last keep-alive ask: abandoned within two intervals, then a new socket.
    await eventually(async () => proxy.connections > connections, 10_000, 'a new connection');
    for (const hash of meanwhile) await eventually(() => answered(hash), 10_000, `getUserOp ${hash} answered`);
    const afterwards = await mineOps();
    for (const hash of afterwards) await eventually(() => answered(hash), 5_000, `getUserOp ${hash} answered`);
    expect(await indexedBlock(t.db, devnet.chainId)).to.equal(await head());
  });

  it('fills the heads it was not told of by polling', async () => {
    await follow('1000');
    const polledBefore = await heads('poll');
    proxy.dropAnnouncements = true;
    const hashes = [...(await mineOps()), ...(await mineOps())];
    for (const hash of hashes) await eventually(() => answered(hash), 15_000, `getUserOp ${hash} answered`);
    expect(proxy.dropped).to.be.greaterThan(0);
    // The ops are visible once their batch commits; the pass counts its head only when it ends
    // (after the head is stored and the due repair pass has run), a moment later.
    await eventually(async () => (await heads('poll')) > polledBefore, 5_000, 'a head counted as found by polling');
    expect(await indexedBlock(t.db, devnet.chainId)).to.equal(await head());
  });

  it('repairs a reorg announced over the subscription', async () => {
    await follow(NO_POLL_MS);
    await mineOps();
    await mineOps();
    await eventually(async () => (await indexedBlock(t.db, devnet.chainId)) === (await head()), 10_000, 'the head indexed');
    const epoch = async () =>
      (await t.db.query<{ reorg_epoch: number }>('select reorg_epoch from indexer_state where chain_id = $1', [devnet.chainId])).rows[0]!
        .reorg_epoch;
    const epochBefore = await epoch();
    const result = await reorg(devnet, 2, { seed: 4 });
    const newHead = result.newBlocks.at(-1)!;
    await eventually(
      async () => {
        const { rows } = await t.db.query<{ indexed_block: string; indexed_block_hash: string }>(
          'select indexed_block, indexed_block_hash from indexer_state where chain_id = $1',
          [devnet.chainId],
        );
        return Number(rows[0]!.indexed_block) === newHead.number && rows[0]!.indexed_block_hash === newHead.hash;
      },
      10_000,
      'the new fork indexed',
    );
    expect(await epoch()).to.equal(epochBefore + 1);
    await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    for (const hash of result.removedUserOpHashes) expect(await answered(hash), hash).to.equal(false);
  });
});
