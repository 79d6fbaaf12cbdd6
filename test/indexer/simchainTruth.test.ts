/**
 * The indexer against the chain simulator (simchain/): a Base-like network, thinned so that a few
 * thousand blocks index within CI's time but still dense (every block holds token logs, most a
 * bundle) with spam blocks over a hosted plan's result cap. Indexed from a recent start block the
 * way a user configures a real network, the store equals the simulator's own truth: every op with
 * its decoded calls, bundles, accounts, transfers, days, and the plain transfers of known addresses
 * — on a node without limits and behind the `tiny` plan (a log range of 100 blocks, 200 results at
 * most, batches of 10: the spam blocks are over the cap on their own), and with a transfer lookback
 * shorter than the range.
 */
import { expect } from 'chai';
import { startIndexer } from '../../indexer/index.js';
import { loadConfig, indexerEnvSchema } from '../../shared/config.js';
import { findProfile } from '../../simchain/profiles.js';
import { startSimChain, type SimChain } from '../../simchain/server.js';
import type { RangeTruth } from '../../simchain/truth.js';
import { useTestDb } from '../helpers/db.js';
import { expectMatchesTruth } from './storedTruth.js';
import { quietLogger } from './support.js';

const FROM = 25_000_000;
const BLOCKS = Number(process.env.SIMCHAIN_TEST_BLOCKS ?? 2_000);
const THIN_BASE = {
  ...findProfile('base'),
  txPerBlock: 24,
  logsPerBlock: 80,
  bundlesPerBlock: 1.2,
  deploysPerBlock: 0.3,
  accounts: 3_000,
  holders: 2_000,
  tokens: 20,
  // Every 400th block carries 300 more Transfer logs: over the tiny plan's 200 results alone.
  spamEvery: 400,
  spamLogs: 300,
};

/** The first block each address of the range's ops (sender, paymaster, factory, bundler) appears in. */
function firstBlocks(truth: RangeTruth): Map<string, number> {
  const first = new Map<string, number>();
  const see = (a: string | null, n: number): void => {
    if (a && !first.has(a)) first.set(a, n);
  };
  for (const o of [...truth.userOps].sort((a, b) => a.blockNumber - b.blockNumber)) {
    for (const a of [o.sender, o.paymaster, o.factory, o.bundler]) see(a, o.blockNumber);
  }
  return first;
}

// A lookback shorter than the range: an address's earlier transfers count from that many blocks
// before the block it is first seen in, whether the backfill or the forward pass reads them.
// And through a hosted node's round trip (every HTTP request answered 50 ms late): the ranges the
// indexer keeps in flight to hide it must still land in order. And from a node whose logs carry no
// blockTimestamp (as older nodes answer): the times of the token logs' blocks come from headers.
const cases = [
  { plan: 'unlimited', blocks: BLOCKS, lookback: BLOCKS, rttMs: 0, logTimestamps: true },
  { plan: 'tiny', blocks: BLOCKS, lookback: BLOCKS, rttMs: 0, logTimestamps: true },
  { plan: 'unlimited', blocks: Math.ceil(BLOCKS / 4), lookback: 40, rttMs: 0, logTimestamps: true },
  { plan: 'unlimited', blocks: Math.ceil(BLOCKS / 2), lookback: BLOCKS, rttMs: 50, logTimestamps: true },
  { plan: 'unlimited', blocks: Math.ceil(BLOCKS / 4), lookback: BLOCKS, rttMs: 0, logTimestamps: false },
];

for (const { plan, blocks: BLOCKS, lookback, rttMs, logTimestamps } of cases) {
  const timestamps = logTimestamps ? '' : ', logs without blockTimestamp';
  describe(`indexer against the chain simulator (thin Base profile, ${BLOCKS} blocks, plan ${plan}, lookback ${lookback}, RTT ${rttMs} ms${timestamps})`, function () {
    this.timeout(900_000);
    const t = useTestDb();
    let chain: SimChain;

    before(async () => {
      chain = await startSimChain({
        profile: THIN_BASE,
        fromBlock: FROM,
        blocks: BLOCKS,
        blockTimeMs: 0,
        plan,
        port: 0,
        rttMs,
        logTimestamps,
      });
    });

    after(async () => {
      await chain?.close();
    });

    it('stores exactly what the simulator says the range holds', async () => {
      const config = loadConfig(indexerEnvSchema, {
        NETWORKS: 'base',
        RPC_URL_BASE: chain.url,
        START_BLOCK_BASE: String(FROM),
        INDEXER_POLL_INTERVAL_MS: '1000',
        INDEXER_TRANSFER_LOOKBACK_BLOCKS: String(lookback),
      });
      const indexer = startIndexer({ db: t.db, config, log: quietLogger(), tuning: { rpcMinRetryDelayMs: 10, rpcMaxRetryDelayMs: 200 } });
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
      const head = chain.head();
      const truth = chain.truth(FROM, head);
      expect(truth.userOps.length, 'ops in the range').to.be.greaterThan(BLOCKS / 2);
      const first = firstBlocks(truth);
      const plainTransfers = chain.truth
        .plainTransfers(FROM, head, (a) => first.has(a))
        .filter((x) => [x.from, x.to].some((a) => first.has(a) && x.blockNumber >= first.get(a)! - lookback));
      expect(plainTransfers.length, 'plain transfers of known addresses').to.be.greaterThan(0);
      if (lookback < BLOCKS)
        expect(
          chain.truth.plainTransfers(FROM, head, (a) => first.has(a)).length,
          'transfers of known addresses before their lookback',
        ).to.be.greaterThan(plainTransfers.length);
      await expectMatchesTruth(t.db, { ...truth, plainTransfers }, (got, want, what) => expect(got, what).to.deep.equal(want));
      const spamBlocks = Math.floor(head / 400) - Math.floor((FROM - 1) / 400);
      expect(spamBlocks, 'spam blocks in the range').to.be.greaterThan(0);
      if (plan === 'tiny') expect(chain.stats().byMethod.eth_getBlockReceipts ?? 0, 'blocks read from their receipts').to.be.greaterThan(0);
    });
  });
}
