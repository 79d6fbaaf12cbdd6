import { expect } from 'chai';
import { z } from 'zod';
import type { TruthUserOp } from '../../devnet/index.js';
import {
  bundleSchema,
  bundlerDetailsSchema,
  bundlerSummarySchema,
  dailyMetricSchema,
  factoryDetailsSchema,
  factorySummarySchema,
  globalCountsSchema,
  networkStatusSchema,
  paymasterDetailSchema,
  paymasterSummarySchema,
  userOpSchema,
} from '../../shared/models/index.js';
import { newestFirst, sumOf } from './support/expected.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';
import { economicsOnChain, expectStoredEconomicsMatchChain, type TxEconomics } from '../indexer/support/bundleEconomics.js';

const total = (values: bigint[]): bigint => values.reduce((sum, v) => sum + v, 0n);

/** address → its ops, ranked by count desc then address (the API's top-list order). */
function ranked(ops: TruthUserOp[], keyOf: (op: TruthUserOp) => string | null): Array<[string, TruthUserOp[]]> {
  const groups = new Map<string, TruthUserOp[]>();
  for (const op of ops) {
    const key = keyOf(op);
    if (key) groups.set(key, [...(groups.get(key) ?? []), op]);
  }
  return [...groups].sort(([a, x], [b, y]) => y.length - x.length || (a < b ? -1 : 1));
}

describe('bundle, bundler, paymaster, factory and metrics endpoints on indexed devnet traffic', () => {
  const d = useIndexedDevnet({ ops: 300, days: 4, seed: 5 });

  it('getLatestBundles lists every bundle newest first with its ops, sender, status and fee', async () => {
    const res = await d.get('getLatestBundles', { network: 'devnet', first: 100 });
    const { bundles } = z.object({ bundles: z.array(bundleSchema) }).parse(res.body);
    const expected = [...d.truth.bundles].sort((a, b) => b.blockNumber - a.blockNumber).slice(0, 100);
    expect(bundles.map((b) => b.blockNumber)).to.deep.equal(expected.map((b) => String(b.blockNumber)));
    for (const bundle of bundles) {
      const truth = d.truth.bundles.find((b) => b.transactionHash === bundle.transactionHash && b.bundleIndex === bundle.bundleIndex)!;
      expect(bundle).to.deep.include({
        from: truth.bundler,
        beneficiary: truth.beneficiary,
        entryPoint: truth.entryPoint,
        status: truth.success ? '1' : '0',
        transactionFee: truth.transactionFee,
        blockTime: String(truth.blockTime),
        userOpsLength: String(truth.userOpHashes.length),
      });
      expect(bundle.userOps.map((o) => o.userOpHash)).to.have.members(truth.userOpHashes);
    }
  });

  it("getTopBundlers ranks bundlers by ops, with the leader's ops as the spec's bundlerDetails", async () => {
    const expected = ranked(d.truth.userOps, (o) => o.bundler);
    const res = await d.get('getTopBundlers', { network: 'devnet', first: 10 });
    const body = z.object({ bundlers: z.array(bundlerSummarySchema), bundlerDetails: bundlerDetailsSchema }).parse(res.body);
    expect(body.bundlers.map((b) => [b.address, b.userOpsLength])).to.deep.equal(expected.map(([a, ops]) => [a, String(ops.length)]));
    for (const bundler of body.bundlers) {
      const bundles = d.truth.bundles.filter((b) => b.bundler === bundler.address);
      const ops = d.truth.userOps.filter((o) => o.bundler === bundler.address);
      expect(bundler.bundleLength).to.equal(String(bundles.length));
      expect(bundler.actualGasCostSum).to.equal(sumOf(ops.map((o) => o.actualGasCost)));
    }
    const [leader, leaderOps] = expected[0]!;
    expect(body.bundlerDetails.address).to.equal(leader);
    expect(body.bundlerDetails.userOps.map((o) => o.userOpHash)).to.deep.equal(
      leaderOps
        .sort(newestFirst)
        .slice(0, 10)
        .map((o) => o.userOpHash),
    );
  });

  it("getBundlerActivity answers a bundler's ops under both the spec's and the explorers' keys", async () => {
    const [bundler, ops] = ranked(d.truth.userOps, (o) => o.bundler)[1]!;
    const res = await d.get('getBundlerActivity', { address: bundler, network: 'devnet', first: 20, skip: 5 });
    const body = z.object({ userOps: z.array(userOpSchema), bundlerDetails: bundlerDetailsSchema }).parse(res.body);
    const page = ops
      .sort(newestFirst)
      .slice(5, 25)
      .map((o) => o.userOpHash);
    expect(body.userOps.map((o) => o.userOpHash)).to.deep.equal(page);
    expect(body.bundlerDetails).to.deep.include({ address: bundler, userOpsLength: String(ops.length) });
    expect(body.bundlerDetails.userOps.map((o) => o.userOpHash)).to.deep.equal(page);
  });

  it('getTopPaymasters ranks paymasters by ops sponsored with the gas they paid', async () => {
    const expected = ranked(d.truth.userOps, (o) => o.paymaster);
    const res = await d.get('getTopPaymasters', { network: 'devnet', first: 100 });
    const { paymasters } = z.object({ paymasters: z.array(paymasterSummarySchema) }).parse(res.body);
    expect(paymasters.map((p) => [p.address, p.userOpsLength, p.gasSponsored, p.network])).to.deep.equal(
      expected.map(([a, ops]) => [a, String(ops.length), sumOf(ops.map((o) => o.actualGasCost)), 'devnet']),
    );
    expect(paymasters.every((p) => BigInt(p.totalDeposits) > 0n)).to.equal(true);
  });

  it("getPaymasterActivity answers a paymaster's totals and ops, and zeros for a stranger", async () => {
    const [paymaster, ops] = ranked(d.truth.userOps, (o) => o.paymaster)[0]!;
    const res = await d.get('getPaymasterActivity', { address: paymaster, network: 'devnet', first: 5 });
    const { paymasterDetail } = z.object({ paymasterDetail: paymasterDetailSchema }).parse(res.body);
    expect(paymasterDetail).to.deep.include({
      address: paymaster,
      userOpsLength: String(ops.length),
      gasSponsored: sumOf(ops.map((o) => o.actualGasCost)),
    });
    expect(paymasterDetail.userOps.map((o) => o.userOpHash)).to.deep.equal(
      ops
        .sort(newestFirst)
        .slice(0, 5)
        .map((o) => o.userOpHash),
    );
    const stranger = await d.get('getPaymasterActivity', { address: `0x${'7'.repeat(40)}`, network: 'devnet' });
    expect(stranger.body.paymasterDetail).to.deep.include({ userOpsLength: '0', gasSponsored: '0', totalDeposits: '0', userOps: [] });
  });

  it('getTopFactories ranks factories by accounts deployed, with or without a network', async () => {
    const counts = new Map<string, number>();
    for (const a of d.truth.accounts) counts.set(a.factory, (counts.get(a.factory) ?? 0) + 1);
    const expected = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([a, n]) => [a, String(n)]);
    for (const query of [{ network: 'devnet', first: 100 }, { first: 100 }]) {
      const res = await d.get('getTopFactories', query);
      const { factories } = z.object({ factories: z.array(factorySummarySchema) }).parse(res.body);
      expect(factories.map((f) => [f.address, f.accountsLength])).to.deep.equal(expected);
    }
  });

  it('getFactoryDetails answers the accounts a factory deployed, newest first, and 404 for a stranger', async () => {
    const factory = d.truth.accounts[0]!.factory;
    const accounts = d.truth.accounts
      .filter((a) => a.factory === factory)
      .sort((a, b) => b.blockNumber - a.blockNumber || (a.address < b.address ? -1 : 1));
    const res = await d.get('getFactoryDetails', { factory, network: 'devnet', first: 100 });
    const { factoryDetails } = z.object({ factoryDetails: factoryDetailsSchema }).parse(res.body);
    expect(factoryDetails.accountsLength).to.equal(String(accounts.length));
    expect(factoryDetails.accounts.map((a) => [a.address, a.blockNumber, a.blockTime])).to.deep.equal(
      accounts.map((a) => [a.address, String(a.blockNumber), String(a.blockTime)]),
    );
    for (const account of factoryDetails.accounts) {
      expect(account.userOpsCount).to.equal(String(d.truth.userOps.filter((o) => o.sender === account.address).length));
    }
    const stranger = await d.get('getFactoryDetails', { factory: `0x${'7'.repeat(40)}`, network: 'devnet' });
    expect(stranger.status).to.equal(404);
  });

  it('getDailyMetrics answers each active day newest first, with running totals', async () => {
    const days = [...d.truth.days].sort((a, b) => b.day - a.day);
    const res = await d.get('getDailyMetrics', { network: 'devnet', noOfDays: 366 });
    const { metrics } = z.object({ metrics: z.array(dailyMetricSchema) }).parse(res.body);
    expect(metrics.map((m) => m.daySinceEpoch)).to.deep.equal(days.map((x) => String(x.day)));
    for (const [i, metric] of metrics.entries()) {
      const day = days[i]!;
      const upTo = d.truth.days.filter((x) => x.day <= day.day);
      const firstDayOf = (addresses: Array<string | null>) => new Set(addresses.filter((a): a is string => a !== null));
      expect(metric).to.deep.include({
        userOpsDaily: String(day.userOps),
        bundleDaily: String(day.bundles),
        walletsCreatedDaily: String(day.walletsCreated),
        gasCostCollectedDaily: day.gasCostCollected,
        activeWalletsDaily: String(day.activeWallets.length),
        userOpsTotal: String(upTo.reduce((n, x) => n + x.userOps, 0)),
        bundlesTotal: String(upTo.reduce((n, x) => n + x.bundles, 0)),
        walletsCreatedTotal: String(upTo.reduce((n, x) => n + x.walletsCreated, 0)),
        gasCostCollectedTotal: sumOf(upTo.map((x) => x.gasCostCollected)),
      });
      expect(metric.activeWallets).to.deep.equal(day.activeWallets);
      const opsUpTo = d.truth.userOps.filter((o) => Math.floor(o.blockTime / 86400) <= day.day);
      expect(metric.paymasterTotal).to.equal(String(firstDayOf(opsUpTo.map((o) => o.paymaster)).size));
      expect(metric.bundlerTotal).to.equal(String(firstDayOf(opsUpTo.map((o) => o.bundler)).size));
      const accountsUpTo = d.truth.accounts.filter((a) => Math.floor(a.blockTime / 86400) <= day.day);
      expect(metric.factoryTotal).to.equal(String(firstDayOf(accountsUpTo.map((a) => a.factory)).size));
    }
    const one = await d.get('getDailyMetrics', { network: 'devnet', noOfDays: 1 });
    expect(one.body.metrics).to.have.length(1);
    // The latest day alone carries the same running totals as in the whole history.
    expect(one.body.metrics[0]).to.deep.equal(metrics[0]);
  });

  it('getGlobalCounts and getNetworkStatus answer the network totals and the indexer position', async () => {
    const counts = await d.get('getGlobalCounts', { network: 'devnet' });
    expect(z.object({ metrics: globalCountsSchema }).parse(counts.body).metrics).to.deep.equal({
      id: 'devnet',
      userOpCounter: String(d.truth.userOps.length),
      bundleCounter: String(d.truth.bundles.length),
      walletsCreated: String(d.truth.accounts.length),
    });
    const head = Number(await d.devnet.rpc.call('eth_blockNumber', []));
    const status = networkStatusSchema.parse((await d.get('getNetworkStatus', { network: 'devnet' })).body);
    expect(status).to.deep.equal({
      network: 'devnet',
      chainId: 31337,
      headBlock: head,
      indexedBlock: head,
      lagBlocks: 0,
      backfillComplete: true,
      writeFailure: null,
    });
  });

  describe("what bundles earned, against the chain's own logs and receipts", () => {
    let chain: Map<string, TxEconomics>;
    before(async () => {
      chain = await economicsOnChain(d.devnet.rpc);
    });

    it("getLatestBundles answers each bundle's revenue, and its profit after its share of the fee", async () => {
      const bundles: Array<z.infer<typeof bundleSchema>> = [];
      for (let skip = 0; ; skip += 100) {
        const res = await d.get('getLatestBundles', { network: 'devnet', first: 100, skip });
        const page = z.object({ bundles: z.array(bundleSchema) }).parse(res.body).bundles;
        bundles.push(...page);
        if (page.length < 100) break;
      }
      expect(new Set(bundles.map((b) => b.transactionHash))).to.deep.equal(new Set(chain.keys()));
      for (const tx of chain.values()) {
        const ofTx = bundles.filter((b) => b.transactionHash === tx.txHash);
        expect(ofTx, tx.txHash).to.have.length(tx.bundles);
        expect(total(ofTx.map((b) => BigInt(b.revenue))), `revenue of ${tx.txHash}`).to.equal(tx.revenue);
        expect(total(ofTx.map((b) => BigInt(b.profit))), `profit of ${tx.txHash}`).to.equal(tx.revenue - tx.fee);
        for (const b of ofTx) expect(b.transactionFee).to.equal(String(tx.fee));
      }
    });

    it('getTopBundlers totals revenue, fee and profit per bundler, over every day or the last `days`', async () => {
      const latestDay = Math.max(...[...chain.values()].map((t) => t.day));
      for (const days of [undefined, 1, 2]) {
        const res = await d.get('getTopBundlers', { network: 'devnet', first: 10, ...(days ? { days } : {}) });
        const { bundlers } = z.object({ bundlers: z.array(bundlerSummarySchema) }).parse(res.body);
        expect(bundlers.length).to.be.greaterThan(0);
        for (const b of bundlers) {
          const txs = [...chain.values()].filter((t) => t.bundler === b.address && (!days || t.day > latestDay - days));
          const revenue = total(txs.map((t) => t.revenue));
          const fee = total(txs.map((t) => t.fee));
          expect({ revenue: b.revenue, fee: b.fee, profit: b.profit }, `${b.address} over ${days ?? 'every'} day(s)`).to.deep.equal({
            revenue: String(revenue),
            fee: String(fee),
            profit: String(revenue - fee),
          });
        }
      }
      const bad = await d.get('getTopBundlers', { network: 'devnet', days: 0 });
      expect(bad.status).to.equal(400);
      expect(JSON.stringify(bad.body)).to.include('days');
    });

    it("getDailyMetrics answers each day's bundlerProfitDaily: the day's revenue less its bundle fees", async () => {
      const res = await d.get('getDailyMetrics', { network: 'devnet', noOfDays: 30 });
      const { metrics } = z.object({ metrics: z.array(dailyMetricSchema) }).parse(res.body);
      expect(metrics.length).to.be.greaterThan(1);
      for (const m of metrics) {
        const txs = [...chain.values()].filter((t) => String(t.day) === m.daySinceEpoch);
        expect(m.bundlerProfitDaily, `day ${m.daySinceEpoch}`).to.equal(String(total(txs.map((t) => t.revenue - t.fee))));
      }
    });

    it('GraphQL answers the same revenue and profit on bundles, bundlers and days', async () => {
      const res = await d.api().post('/subgraphs/name/devnet').set('x-api-key', d.key).send({
        query:
          '{ bundles(first: 1000) { transactionHash revenue profit } bundlers(first: 100) { id profit } dailyMetrics(first: 100) { id bundlerProfitDaily } }',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const data = res.body.data as {
        bundles: Array<{ transactionHash: string; revenue: string; profit: string }>;
        bundlers: Array<{ id: string; profit: string }>;
        dailyMetrics: Array<{ id: string; bundlerProfitDaily: string }>;
      };
      for (const tx of chain.values()) {
        const ofTx = data.bundles.filter((b) => b.transactionHash === tx.txHash);
        expect(total(ofTx.map((b) => BigInt(b.profit))), tx.txHash).to.equal(tx.revenue - tx.fee);
      }
      for (const b of data.bundlers) {
        const txs = [...chain.values()].filter((t) => t.bundler === b.id);
        expect(b.profit, b.id).to.equal(String(total(txs.map((t) => t.revenue - t.fee))));
      }
      for (const m of data.dailyMetrics) {
        const txs = [...chain.values()].filter((t) => String(t.day) === m.id);
        expect(m.bundlerProfitDaily, `day ${m.id}`).to.equal(String(total(txs.map((t) => t.revenue - t.fee))));
      }
    });

    it('the stored bundler days and daily fees equal the chain', async () => {
      await expectStoredEconomicsMatchChain(d.db, d.devnet.chainId, d.devnet.rpc);
    });
  });
});
