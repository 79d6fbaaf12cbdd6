/**
 * Networks side by side in the indexer processes that PostgreSQL runs them in, against
 * chain simulators following their heads:
 * - the split: every network to one process, evenly, pins kept, the same in every process;
 * - faults between networks: one network's RPC silent, one answering 500s and garbage, one whose
 *   bundles are malformed (its decoding throws), one whose worker is killed — the healthy networks
 *   keep every lag p99 ≤ 2 blocks and equal their simulators' truth, the killed one is restarted and
 *   does too;
 * Processes joining and SIGKILLed are in the fault suite (test/faults/networks.faults.ts).
 */
import { expect } from 'chai';
import { register } from 'prom-client';
import { defaultYoungMb, startSharedIndexer, type SharedIndexer } from '../../indexer/index.js';
import { assignNetworks } from '../../indexer/membership.js';
import { indexerEnvSchema, loadConfig } from '../../shared/config.js';
import type { SimChain } from '../../simchain/server.js';
import { useTestDb } from '../helpers/db.js';
import { eventually, indexedBlock, quietLogger } from './support.js';
import {
  chainsEnv,
  expectChainMatchesTruth,
  p99,
  sampleLags,
  startGarbageEndpoint,
  startMalformedBundleProxy,
  startSilentEndpoint,
  startThinChains,
  type FaultyEndpoint,
} from './support/networksUnderFault.js';

const BLOCK_MS = 1_000;
const FAST = { rpcTimeoutMs: 2_000, rpcMinRetryDelayMs: 50, rpcMaxRetryDelayMs: 500, rpcRetries: 3, lockRetryMs: 500 };

describe('the split of networks between indexer processes', () => {
  const members = (n: number, chainIds: number[]) => Array.from({ length: n }, (_, i) => ({ memberId: `m${i}`, chainIds }));
  const chains = Array.from({ length: 21 }, (_, i) => i + 1);
  const counts = (owners: Map<number, string>) =>
    [...owners.values()].reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());

  it('gives every network to one process, evenly, whatever the order the rows are read in', () => {
    for (const n of [1, 2, 3, 4, 5]) {
      const owners = assignNetworks(members(n, chains));
      expect(owners.size).to.equal(21);
      const held = [...counts(owners).values()];
      expect(held.length, `${n} processes each hold some`).to.equal(n);
      expect(Math.max(...held) - Math.min(...held), `${n} processes`).to.be.at.most(1);
      expect(assignNetworks(members(n, chains).reverse())).to.deep.equal(owners);
    }
  });

  it('keeps pinned processes to their networks and balances the rest around them', () => {
    const owners = assignNetworks([
      { memberId: 'pinned', chainIds: [1, 2] },
      { memberId: 'a', chainIds: chains },
      { memberId: 'b', chainIds: chains },
    ]);
    expect([...owners].filter(([, m]) => m === 'pinned').every(([c]) => c <= 2)).to.equal(true);
    const held = counts(owners);
    expect(Math.abs(held.get('a')! - held.get('b')!)).to.be.at.most(1);
    expect(held.get('a')! + held.get('b')! + (held.get('pinned') ?? 0)).to.equal(21);
  });
});

describe("a network worker's young generation", () => {
  it('is larger for a process of one or two networks, 8 MB for more, unless INDEXER_NETWORK_YOUNG_MB is set', () => {
    expect(defaultYoungMb(1)).to.equal(16);
    expect(defaultYoungMb(2)).to.equal(16);
    expect(defaultYoungMb(3)).to.equal(8);
    expect(defaultYoungMb(21)).to.equal(8);
    const env = { DATABASE_URL: 'postgres://localhost/x', NETWORKS: 'base' };
    expect(loadConfig(indexerEnvSchema, env).INDEXER_NETWORK_YOUNG_MB).to.equal(undefined);
    expect(loadConfig(indexerEnvSchema, { ...env, INDEXER_NETWORK_YOUNG_MB: '0' }).INDEXER_NETWORK_YOUNG_MB).to.equal(0);
    expect(() => loadConfig(indexerEnvSchema, { ...env, INDEXER_NETWORK_YOUNG_MB: '-1' })).to.throw(/INDEXER_NETWORK_YOUNG_MB/);
  });
});

describe('networks side by side, each on its own worker thread', function () {
  this.timeout(240_000);
  const t = useTestDb();
  let chains: SimChain[] = [];
  /** Each chain's head when the first test began: every network is compared with its truth from there. */
  let starts: number[] = [];
  const endpoints: FaultyEndpoint[] = [];

  after(async () => {
    await Promise.all(endpoints.map((e) => e.stop()));
    await Promise.all(chains.map((c) => c.close()));
  });

  const start = (env: Record<string, string>): Promise<SharedIndexer> => {
    const config = loadConfig(indexerEnvSchema, { DATABASE_URL: t.url!, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env });
    return startSharedIndexer({
      databaseUrl: t.url!,
      config,
      log: quietLogger(),
      tuning: FAST,
      heartbeatMs: 1_000,
      ttlMs: 5_000,
      supervision: { restartDelayMs: 200 },
    });
  };

  it('one network silent, one answering garbage, one with malformed bundles, one killed: the others keep their lag and their truth', async function () {
    if (!t.url) this.skip();
    // healthy: base, optimism; killed: gnosis; faulty: matic (silent), bsc (garbage), avalanche (malformed bundles).
    chains = await startThinChains(['base', 'optimism', 'gnosis', 'matic', 'bsc', 'avalanche'], BLOCK_MS);
    const [silent, garbage, malformed] = await Promise.all([
      startSilentEndpoint(),
      startGarbageEndpoint(),
      startMalformedBundleProxy(chains[5]!.url),
    ]);
    endpoints.push(silent, garbage, malformed);
    const faulty = new Map([
      [chains[3]!, silent.url],
      [chains[4]!, garbage.url],
      [chains[5]!, malformed.url],
    ]);
    const env = chainsEnv(chains, (c) => faulty.get(c) ?? c.url);
    starts = chains.map((c) => c.head());
    const healthy = chains.slice(0, 3);
    const indexer = await start(env);
    try {
      await eventually(
        async () => (await Promise.all(healthy.map((c) => indexedBlock(t.db, c.chainId)))).every((b, i) => b >= healthy[i]!.head() - 1),
        60_000,
        'the healthy networks at their heads',
      );
      const sampling = sampleLags(t.db, healthy);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const restartsBefore = await restartsOf('gnosis');
      await indexer.supervisor.kill('gnosis');
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      await sampling.stop();
      expect(await restartsOf('gnosis'), 'the killed worker was restarted').to.equal(restartsBefore + 1);
      // Lag is sampled while the killed network restarts: the base and optimism samples are what the aim is about.
      for (const [i, chain] of healthy.slice(0, 2).entries()) {
        expect(sampling.lags[i]!.length, `${chain.profile.name} lag samples`).to.be.greaterThan(10);
        expect(p99(sampling.lags[i]!), `${chain.profile.name} lag p99 (${sampling.lags[i]!.join(',')})`).to.be.at.most(2);
      }
      expect(silent.requests() + garbage.requests() + malformed.requests(), 'the faulty endpoints were asked').to.be.greaterThan(3);
      // The faulty networks never moved past their start (nothing wrong was stored).
      for (const chain of faulty.keys()) expect(await indexedBlock(t.db, chain.chainId), chain.profile.name).to.be.at.most(chain.head());
      expect(await indexedBlock(t.db, chains[5]!.chainId), 'the malformed network wrote nothing past its start').to.be.below(starts[5]!);
      await eventually(
        async () => (await indexedBlock(t.db, chains[2]!.chainId)) >= chains[2]!.head() - 1,
        30_000,
        'the killed network back at its head',
      );
    } finally {
      await indexer.stop();
    }
    for (const [i, chain] of healthy.entries()) {
      const ops = await expectChainMatchesTruth(t.db, chain, starts[i]!, (got, want, what) => expect(got, what).to.deep.equal(want));
      expect(ops, `${chain.profile.name} ops`).to.be.greaterThan(0);
    }
  });
});

async function restartsOf(network: string): Promise<number> {
  const metric = await register.getSingleMetric('opscan_indexer_network_restarts_total')?.get();
  return (metric?.values ?? []).filter((v) => v.labels.network === network).reduce((sum, v) => sum + v.value, 0);
}
