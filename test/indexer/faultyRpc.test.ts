/**
 * A flaky node does not change the result: through a proxy that fails 20% of requests (timeouts,
 * 429, 5xx, malformed answers) and enforces a provider's eth_getLogs range and batch-size limits,
 * the indexer stores exactly the ground truth, and fails over to a second URL when the first is dead.
 */
import { expect } from 'chai';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer, type IndexerTuning } from '../../indexer/index.js';
import { bytea, type Db } from '../../shared/db/client.js';
import { useTestDb } from '../helpers/db.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { expectMatchesTruth, readStoredTruth } from './storedTruth.js';
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
  describe(
    '20% of requests failing, provider limits enforced',
    flakyTests(t, () => devnet),
  );
  const failover = useTestDb();
  describe(
    'a dead first URL',
    failoverTests(failover, () => devnet),
  );
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
      // Every transaction traced (INDEXER_TRACES=all), so the flaky node's traces are exercised too.
      const indexer = startIndexer({
        db: t.db,
        config: devnetConfig(proxy.url, { INDEXER_TRACES: 'all' }),
        log: quietLogger(),
        tuning: FLAKY_TUNING,
      });
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
      const { rows } = await t.db.query<{ n: string }>(`select count(*) as n from user_op_traces where chain_id = $1 and status = 'ok'`, [
        devnet.chainId,
      ]);
      expect(Number(rows[0]!.n)).to.equal(devnet.truth.userOps.length);
      for (const fault of [
        'timeout',
        'http429',
        'http5xx',
        'truncated',
        'missingAnswer',
        'internalError',
        'rangeRefusals',
        'batchRefusals',
      ] as const) {
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
      const indexer = startIndexer({ db: t.db, config, log: quietLogger(), tuning: FLAKY_TUNING });
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    });
  };
}

describe('indexer on nodes that answer differently', function () {
  this.timeout(300_000);
  let devnet: Devnet;

  before(async () => {
    devnet = await startDevnet();
    // Enough bundles that some transactions carry two (through BundleMulticall; about half of those
    // hide their calldata from the input, so only a trace shows it).
    await generate(devnet, { ops: 200, days: 1, seed: 17, layout: { multiBundleTxRate: 0.5 } });
  });

  after(async () => {
    await devnet?.stop();
  });

  const noDebug = useTestDb();
  describe(
    'without debug_traceTransaction',
    noTraceTests(noDebug, () => devnet),
  );
  const odd = useTestDb();
  describe(
    'stale receipts from a load balancer, zero-hash logs',
    oddAnswerTests(odd, () => devnet),
  );
  const capped = useTestDb();
  const cappedNoBlockReceipts = useTestDb();
  const paced = useTestDb();
  describe(
    "no batches, a result cap below one block's logs, a pace limit",
    cappedPlanTests(capped, cappedNoBlockReceipts, paced, () => devnet),
  );
});

async function indexThrough(db: Db, proxy: FaultProxy, tuning: Partial<IndexerTuning> = {}): Promise<void> {
  const indexer = startIndexer({ db, config: devnetConfig(proxy.url), log: quietLogger(), tuning: { ...FLAKY_TUNING, ...tuning } });
  try {
    await indexer.syncNow();
  } finally {
    await indexer.stop();
  }
}

function noTraceTests(t: { readonly db: Db }, getDevnet: () => Devnet) {
  return function () {
    it('keeps every op from its events; calldata hidden in a wrapper waits for a trace (trace_needed), readable calldata inside it does not; the repair pass decodes the rest once the node traces', async () => {
      const devnet = getDevnet();
      const proxy = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, unsupportedMethods: ['debug_traceTransaction'] });
      try {
        await indexThrough(t.db, proxy);
      } finally {
        await proxy.stop();
      }
      expect(proxy.stats.unsupported).to.be.greaterThan(0);
      const stored = await readStoredTruth(t.db, devnet.chainId);
      const hidden = new Set(devnet.truth.calldataOnlyInTraces);
      expect(hidden.size, 'multi-bundle transactions hiding their calldata generated').to.be.greaterThan(0);
      const readable = devnet.truth.bundles.filter((b) => b.bundleIndex > 0 && !hidden.has(b.transactionHash));
      expect(readable.length, 'multi-bundle transactions with readable calldata generated').to.be.greaterThan(0);
      const byHash = new Map(stored.userOps.map((o) => [o.userOpHash, o]));
      expect(byHash.size).to.equal(devnet.truth.userOps.length);
      const { rows } = await t.db.query<{ user_op_hash: string; decode_status: string; tx_hash: string }>(
        'select user_op_hash, decode_status, tx_hash from user_ops where chain_id = $1',
        [devnet.chainId],
      );
      for (const r of rows) expect(r.decode_status, r.tx_hash).to.equal(hidden.has(r.tx_hash) ? 'trace_needed' : 'ok');
      for (const want of devnet.truth.userOps) {
        const got = byHash.get(want.userOpHash)!;
        const fromEvents = (o: typeof want) => [
          o.sender,
          o.nonce,
          o.paymaster,
          o.success,
          o.actualGasCost,
          o.actualGasUsed,
          o.revertReason,
          o.factory,
          o.blockNumber,
          o.logIndex,
          o.bundleIndex,
          o.bundler,
        ];
        expect(fromEvents(got), want.userOpHash).to.deep.equal(fromEvents(want));
        if (!hidden.has(want.transactionHash)) expect(got).to.deep.equal(want);
      }
      // INDEXER_TRACES=needed stores no `unavailable` rows: the web process traces an op when asked.
      const { rows: traces } = await t.db.query<{ n: string }>('select count(*) as n from user_op_traces where chain_id = $1', [
        devnet.chainId,
      ]);
      expect(traces[0]!.n).to.equal('0');

      // The repair pass, still without a debug API: nothing changes and nothing fails.
      const stillNoDebug = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, unsupportedMethods: ['debug_traceTransaction'] });
      try {
        await indexThrough(t.db, stillNoDebug, { traceRepairIntervalMs: 0 });
      } finally {
        await stillNoDebug.stop();
      }
      expect(stillNoDebug.stats.unsupported, 'the repair pass asked the node again').to.be.greaterThan(0);
      const { rows: waiting } = await t.db.query<{ n: string }>(
        `select count(*) as n from user_ops where chain_id = $1 and decode_status = 'trace_needed'`,
        [devnet.chainId],
      );
      expect(Number(waiting[0]!.n)).to.be.greaterThan(0);

      // A node that traces: the repair pass decodes every waiting op, and the store equals the truth
      // (calldata fields, account calls, beneficiaries and their stats, native transfers).
      const traces2 = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0 });
      try {
        await indexThrough(t.db, traces2, { traceRepairIntervalMs: 0 });
      } finally {
        await traces2.stop();
      }
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
      const { rows: after } = await t.db.query<{ decode_status: string; n: string }>(
        'select decode_status, count(*) as n from user_ops where chain_id = $1 group by decode_status',
        [devnet.chainId],
      );
      expect(after).to.deep.equal([{ decode_status: 'ok', n: String(devnet.truth.userOps.length) }]);
      const { rows: repairedTraces } = await t.db.query<{ n: string }>(
        `select count(*) as n from user_op_traces where chain_id = $1 and status = 'ok'`,
        [devnet.chainId],
      );
      expect(Number(repairedTraces[0]!.n)).to.equal(devnet.truth.userOps.filter((o) => hidden.has(o.transactionHash)).length);
    });
  };
}

function oddAnswerTests(t: { readonly db: Db }, getDevnet: () => Devnet) {
  return function () {
    it('refetches a range whose receipt came from another block, skips zero-hash logs, and stores exactly the truth', async () => {
      const devnet = getDevnet();
      const proxy = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, staleReceiptsOnce: true, zeroHashLogs: true });
      try {
        await indexThrough(t.db, proxy);
      } finally {
        await proxy.stop();
      }
      expect(proxy.stats.staleReceipts).to.be.greaterThan(0);
      expect(proxy.stats.zeroHashLogs).to.be.greaterThan(0);
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
      const { rows } = await t.db.query<{ n: string }>(`select count(*) as n from entry_point_deposits where tx_hash = $1`, [
        bytea(`0x${'0'.repeat(64)}`),
      ]);
      expect(rows[0]!.n).to.equal('0');
    });
  };
}

function cappedPlanTests(t: { readonly db: Db }, t2: { readonly db: Db }, t3: { readonly db: Db }, getDevnet: () => Devnet) {
  return function () {
    it('sends calls one by one to a node that takes no batches, reads a block over the result cap from its receipts, and stores exactly the truth', async () => {
      const devnet = getDevnet();
      // Two logs at most per eth_getLogs: every block holding a bundle is over the cap on its own.
      // The first run reads those blocks with eth_getBlockReceipts; the second, on a node without it,
      // with a receipt per transaction.
      const proxy = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, noBatches: true, maxLogResults: 2 });
      try {
        await indexThrough(t.db, proxy, { rpcMinRetryDelayMs: 1, rpcMaxRetryDelayMs: 5 });
      } finally {
        await proxy.stop();
      }
      expect(proxy.stats.batchRefusals, 'batches refused').to.be.greaterThan(0);
      expect(proxy.stats.resultRefusals, 'one-block ranges refused').to.be.greaterThan(0);
      await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));

      const noBlockReceipts = await startFaultProxy({
        upstream: devnet.rpcUrl,
        faultRate: 0,
        maxLogResults: 2,
        unsupportedMethods: ['eth_getBlockReceipts'],
      });
      try {
        await indexThrough(t2.db, noBlockReceipts);
      } finally {
        await noBlockReceipts.stop();
      }
      expect(noBlockReceipts.stats.unsupported, 'eth_getBlockReceipts asked').to.be.greaterThan(0);
      await expectMatchesTruth(t2.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    });

    it('learns the pace of a node that answers HTTP 429 past 40 calls a second (batches of 100 never fit), and stores exactly the truth', async () => {
      const devnet = getDevnet();
      const proxy = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, callsPerSecond: 40 });
      try {
        // The default batch of 100 calls and retries: the pace, not the retry budget, gets it through.
        await indexThrough(t3.db, proxy, { rpcBatchSize: 100, rpcRetries: 8 });
      } finally {
        await proxy.stop();
      }
      expect(proxy.stats.rateLimited, 'calls refused for their pace').to.be.greaterThan(0);
      await expectMatchesTruth(t3.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    });
  };
}
