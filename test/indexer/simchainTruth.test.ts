/**
 * The indexer against the chain simulator (simchain/): a Base-like network, thinned so that a few
 * thousand blocks index within CI's time but still dense (every block holds token logs, most a
 * bundle) with spam blocks over a hosted plan's result cap. Indexed from a recent start block the
 * way a user configures a real network, the store equals the simulator's own truth: every op with
 * its decoded calls, bundles, accounts, transfers, days, and the plain transfers of known addresses
 * — on a node without limits and behind the `tiny` plan (a log range of 100 blocks, 200 results at
 * most, batches of 10: the spam blocks are over the cap on their own).
 */
import { expect } from 'chai';
import { startIndexer } from '../../indexer/index.js';
import { loadConfig, indexerEnvSchema } from '../../shared/config.js';
import { findProfile } from '../../simchain/profiles.js';
import { startSimChain, type SimChain } from '../../simchain/server.js';
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

for (const plan of ['unlimited', 'tiny']) {
  describe(`indexer against the chain simulator (thin Base profile, ${BLOCKS} blocks, plan ${plan})`, function () {
    this.timeout(900_000);
    const t = useTestDb();
    let chain: SimChain;

    before(async () => {
      chain = await startSimChain({ profile: THIN_BASE, fromBlock: FROM, blocks: BLOCKS, blockTimeMs: 0, plan, port: 0 });
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
        // Every plain transfer of an address known by the end, as the truth lists them.
        INDEXER_TRANSFER_LOOKBACK_BLOCKS: String(BLOCKS),
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
      const plainTransfers = chain.truth.plainTransfers(FROM, head, (a) => truth.known.has(a));
      expect(plainTransfers.length, 'plain transfers of known addresses').to.be.greaterThan(0);
      await expectMatchesTruth(t.db, { ...truth, plainTransfers }, (got, want, what) => expect(got, what).to.deep.equal(want));
      const spamBlocks = Math.floor(head / 400) - Math.floor((FROM - 1) / 400);
      expect(spamBlocks, 'spam blocks in the range').to.be.greaterThan(0);
      if (plan === 'tiny') expect(chain.stats().byMethod.eth_getBlockReceipts ?? 0, 'blocks read from their receipts').to.be.greaterThan(0);
    });
  });
}
