/**
 * A flaky node does not change the result: through a proxy that fails 20% of requests (timeouts,
 * 429, 5xx, malformed answers) and enforces a provider's eth_getLogs range and batch-size limits,
 * the indexer stores exactly the ground truth, and fails over to a second URL when the first is dead.
 */
import { expect } from 'chai';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer } from '../../indexer/index.js';
import type { Db } from '../../shared/db/client.js';
import { useTestDb } from '../helpers/db.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { expectMatchesTruth } from './storedTruth.js';
import { devnetConfig, quietLogger } from './support.js';

const FLAKY_TUNING = {
  rpcTimeoutMs: 400,
  rpcMinRetryDelayMs: 10,
  rpcMaxRetryDelayMs: 100,
  rpcRetries: 12,
  rpcBatchSize: 40,
  initialLogRange: 64,
};

describe('indexer behind a faulty RPC', function () {
  this.timeout(300_000);
  let devnet: Devnet;

  before(async () => {
    devnet = await startDevnet();
    await generate(devnet, { ops: 250, days: 2, seed: 13, layout: { maxBundlesPerBlock: 2 } });
  });

  after(async () => {
    await devnet?.stop();
  });

  const t = useTestDb();
  describe('20% of requests failing, provider limits enforced', flakyTests(t, () => devnet));
  const failover = useTestDb();
  describe('a dead first URL', failoverTests(failover, () => devnet));
});

function flakyTests(t: { readonly db: Db }, getDevnet: () => Devnet) {
  return function () {
    let proxy: FaultProxy;

    after(async () => {
      await proxy?.stop();
    });

    it('stores exactly the ground truth', async () => {
      const devnet = getDevnet();
      proxy = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0.2, maxLogRange: 5, maxBatchSize: 25, hangMs: 1_000, seed: 7 });
      const indexer = startIndexer({ db: t.db, config: devnetConfig(proxy.url), log: quietLogger(), tuning: FLAKY_TUNING });
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
      const { rows } = await t.db.query<{ n: string }>(`select count(*) as n from user_op_traces where chain_id = $1 and status = 'ok'`, [devnet.chainId]);
      expect(Number(rows[0]!.n)).to.equal(devnet.truth.userOps.length);
      for (const fault of ['timeout', 'http429', 'http5xx', 'truncated', 'missingAnswer', 'internalError', 'rangeRefusals', 'batchRefusals'] as const) {
        expect(proxy.stats[fault], `${fault} injected`).to.be.greaterThan(0);
      }
    });
  };
}

function failoverTests(t: { readonly db: Db }, getDevnet: () => Devnet) {
  return function () {
    it('indexes through the second URL of RPC_URL_<NAME>', async () => {
      const devnet = getDevnet();
      // Nothing listens on port 9 of the loopback: every request to the first URL fails at once.
      const config = devnetConfig(`http://127.0.0.1:9,${devnet.rpcUrl}`);
      const indexer = startIndexer({ db: t.db, config, log: quietLogger(), tuning: { ...FLAKY_TUNING, opTraces: false } });
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    });
  };
}
