/**
 * An RPC list whose second URL serves another chain: RPC_URL_DEVNET=A,B,C where A and C reach the
 * devnet (chain 31337) and B another anvil (chain 1337, further ahead). B is left out from the
 * start and said so; when A drops every connection the indexer goes on through C, never asking B
 * for anything but its chain; when A answers again the indexer is back on A; the store equals the
 * devnet's truth.
 */
import { expect } from 'chai';
import pino from 'pino';
import { register } from 'prom-client';
import { generate, startContinuous, startDevnet, type ContinuousTraffic, type Devnet } from '../../devnet/index.js';
import { startChain, type Chain } from '../../devnet/chain.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import type { Logger } from '../../shared/log.js';
import { useTestDb } from '../helpers/db.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';
import { expectMatchesTruth } from './storedTruth.js';
import { devnetConfig, eventually, indexedBlock } from './support.js';

type Json = Record<string, unknown>;

describe('indexer with an RPC URL of another chain in its list', function () {
  this.timeout(180_000);
  const t = useTestDb();
  let devnet: Devnet;
  let other: Chain;
  const proxies: FaultProxy[] = [];
  let cutter: TcpProxy;
  let indexer: Indexer | undefined;
  let traffic: ContinuousTraffic | undefined;

  before(async () => {
    devnet = await startDevnet();
    await generate(devnet, { ops: 60, days: 1, seed: 5 });
    other = await startChain({ chainId: 1337 });
    // Ahead of the devnet: read as the devnet, its blocks would look like new ones.
    await other.rpc.call('anvil_mine', ['0x400']);
  });

  after(async () => {
    await traffic?.stop();
    await indexer?.stop();
    await cutter?.close();
    for (const p of proxies) await p.stop();
    await other?.stop();
    await devnet?.stop();
  });

  const head = async (): Promise<number> => Number(await devnet.rpc.call<string>('eth_blockNumber'));
  const caughtUp = async (what: string): Promise<void> => {
    const target = await head();
    await eventually(async () => (await indexedBlock(t.db, devnet.chainId)) >= target, 60_000, what);
  };
  const wrongChainGauge = async () => (await register.getSingleMetric('opscan_indexer_rpc_endpoint_wrong_chain_id')?.get())?.values ?? [];

  it('leaves the URL of another chain out and says so, goes on through the next right URL, and goes back to the first when it recovers', async () => {
    const proxy = async (upstream: string): Promise<FaultProxy> => {
      const p = await startFaultProxy({ upstream, faultRate: 0 });
      proxies.push(p);
      return p;
    };
    const first = await proxy(devnet.rpcUrl);
    const wrong = await proxy(other.rpcUrl);
    const third = await proxy(devnet.rpcUrl);
    // A's connections can be cut (dropped at once, new ones closed on accept), then let through again.
    cutter = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(first.url).port) });
    // Provider-style URLs: the key in the path must not reach a log line or a metric label.
    const wrongUrl = `${wrong.url}/v2/secret-key-b`;
    const urls = [`http://127.0.0.1:${cutter.port}/v2/secret-key-a`, wrongUrl, `${third.url}/v2/secret-key-c`];

    const logged: Json[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as Json) }) as unknown as Logger;
    indexer = startIndexer({
      db: t.db,
      config: devnetConfig(urls.join(','), { INDEXER_POLL_INTERVAL_MS: '200' }),
      log,
      tuning: { rpcTimeoutMs: 2_000, rpcMinRetryDelayMs: 20, rpcMaxRetryDelayMs: 200, rpcRetries: 20, rpcEndpointRecheckMs: 1_000 },
    });
    await indexer.syncNow();
    expect(await indexedBlock(t.db, devnet.chainId)).to.equal(await head());

    // Said at start, before B was ever needed: which URL (its host, no key), which chain it serves.
    const leftOut = logged.filter((l) => l.msg === 'a JSON-RPC URL serves another chain: left out, asked again later');
    expect(leftOut.length, 'the wrong URL said').to.be.greaterThan(0);
    expect(leftOut[0]).to.include({ rpc: `#2 ${new URL(wrong.url).host}`, servedChainId: 1337, chainId: devnet.chainId });
    expect(JSON.stringify(logged)).to.not.include('secret-key');
    const gauge = await wrongChainGauge();
    expect(gauge.map((g) => [g.labels.endpoint, g.value])).to.deep.include([`#2 ${new URL(wrong.url).host}`, 1337]);

    // A drops every connection while the devnet keeps producing: the indexer follows through C.
    traffic = startContinuous(devnet, { intervalMs: 300, opsPerTick: 2, seed: 3 });
    cutter.cut();
    const thirdBefore = third.stats.requests;
    await new Promise((r) => setTimeout(r, 2_000));
    await caughtUp('the head, through C, while A is down');
    expect(third.stats.requests, 'C used while A is down').to.be.greaterThan(thirdBefore);

    // A answers again: within a recheck or two the indexer is back on it, and C is left idle.
    cutter.restore();
    await eventually(
      async () =>
        logged.some(
          (l) => l.msg === 'an earlier JSON-RPC URL of the list answers again: using it' && l.to === `#1 127.0.0.1:${cutter.port}`,
        ),
      15_000,
      'a return to the first URL',
    );
    await caughtUp('the head after A came back');
    const firstBefore = first.stats.requests;
    const thirdAfter = third.stats.requests;
    await new Promise((r) => setTimeout(r, 1_500));
    await caughtUp('the head, through A again');
    expect(first.stats.requests, 'A used again').to.be.greaterThan(firstBefore);
    expect(third.stats.requests, 'C idle once A is back').to.equal(thirdAfter);
    await traffic.stop();
    traffic = undefined;
    await caughtUp('the last block of the traffic');
    await indexer.stop();
    indexer = undefined;

    // B was asked for its chain only, never for a block, a log or a receipt.
    expect(Object.keys(wrong.methods)).to.deep.equal(['eth_chainId']);
    await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
  });
});
