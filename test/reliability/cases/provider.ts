/**
 * The RPC provider misbehaving, in front of the indexer process (the web and the dispatcher do not
 * read the chain):
 *
 *   - a flaky provider: a fault-injecting proxy in front of the devnet fails 25 % of requests with
 *     HTTP 502 or 503, 10 % with 429, 10 % with JSON-RPC errors, adds latency and answers `null` for 5 %
 *     of the just-announced blocks; then cuts answers short and drops sockets; then heals;
 *   - an RPC URL that serves another chain: RPC_URL_DEVNET=A,B where B is an anvil of another chain
 *     id, further ahead; A drops every connection for a while (the failover goes to B), then
 *     recovers. The indexer must refuse B, say why, and go back to A.
 */
import { startChain } from '../../../devnet/chain.js';
import { startContinuous } from '../../../devnet/index.js';
import { BAD_MINUTE, startFaultProxy } from '../../helpers/faultProxy.js';
import { startTcpProxy } from '../../helpers/tcpProxy.js';
import { waitUntil } from '../../faults/support/childProcess.js';
import { PLAN, RECOVERY_BOUND_MS, ms, sleep, type Deployment, type Matrix } from '../judging.js';

/** How long A drops every connection while the devnet produces. */
const CUT_OFF_MS = 10_000;

/** Waits until the indexer is within two blocks of the producing head (a poll is 1 s, a block 0.7 s); answers how long it took. */
async function caughtUp(d: Deployment, what: string): Promise<number> {
  const t0 = performance.now();
  await waitUntil(what, async () => (await d.head()) - (await d.indexedBlock()) <= 2, RECOVERY_BOUND_MS);
  return performance.now() - t0;
}

/**
 * The indexer started again with `rpcUrls` as its RPC_URL_DEVNET; resolves once the new process
 * reads the chain through them (`used` counts what they were sent) and is at the head.
 */
async function reconnect(d: Deployment, rpcUrls: string, used: () => number): Promise<void> {
  await d.product.kill('indexer');
  const before = used();
  d.product.restart('indexer', { RPC_URL_DEVNET: rpcUrls });
  await waitUntil('the new indexer process reading the chain', () => used() > before, RECOVERY_BOUND_MS);
  await sleep(2_000);
  await caughtUp(d, 'the new indexer process at the head');
}

export function providerCases(matrix: Matrix): void {
  it(`the RPC provider: flaky (${PLAN.badProviderS[0]} s of faults, ${PLAN.badProviderS[1]} s of cut answers), then a failover to a URL of another chain`, async () => {
    const d = await matrix.deploy('reliability provider');
    const [badS, worseS] = PLAN.badProviderS;
    const proxy = await startFaultProxy({ upstream: d.devnet.rpcUrl, faultRate: 0, seed: 5, lifetimeMs: 30 * 60_000 });
    try {
      await reconnect(d, proxy.url, () => proxy.stats.requests);
      const traffic = startContinuous(d.devnet, { intervalMs: 700, opsPerTick: 2, seed: 700 });
      await sleep(3_000);
      const badFrom = { head: await d.head(), indexed: await d.indexedBlock() };
      proxy.configure(BAD_MINUTE.bad);
      await sleep(badS * 1000);
      const badTo = { head: await d.head(), indexed: await d.indexedBlock() };
      proxy.configure(BAD_MINUTE.worse);
      await sleep(worseS * 1000);
      proxy.configure(BAD_MINUTE.healed);
      const behindAtHeal = (await d.head()) - (await d.indexedBlock());
      const catchUpMs = await caughtUp(d, 'the indexer at the head after the provider healed');
      await traffic.stop();
      const { requests, http5xx, http429, internalError, nullBlocks, truncated, closedSocket } = proxy.stats;
      await matrix.record(d, {
        group: 'RPC provider',
        scenario: `flaky: ${badS} s of 25 % HTTP 5xx, 10 % 429, 10 % JSON-RPC errors, ≤400 ms latency, 5 % null blocks; ${worseS} s of cut answers and dropped sockets`,
        figures: [
          `${badTo.indexed - badFrom.indexed} of ${badTo.head - badFrom.head} blocks indexed through the ${badS} s`,
          `${behindAtHeal} behind at the heal, at the head ${ms(catchUpMs)} after it`,
          `injected over ${requests} requests: HTTP 5xx ×${http5xx}, 429 ×${http429}, JSON-RPC error ×${internalError}, null ×${nullBlocks}, truncated ×${truncated}, dropped ×${closedSocket}`,
        ],
      });
    } finally {
      await proxy.stop();
    }

    const other = await startChain({ chainId: 1337 });
    // B counts what it is asked; A's connections can be cut, then let through again.
    const wrong = await startFaultProxy({ upstream: other.rpcUrl, faultRate: 0, lifetimeMs: 30 * 60_000 });
    const first = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(d.devnet.rpcUrl).port) });
    try {
      // Ahead of the devnet: read as the devnet, its blocks would look like new ones.
      await other.rpc.call('anvil_mine', ['0x400']);
      await reconnect(d, `http://127.0.0.1:${first.port},${wrong.url}`, () => first.accepted);
      // Said as the process starts (printed() reads what it printed since).
      const said = d.product.printed('indexer', 'a JSON-RPC URL serves another chain', 10_000).then(
        () => true,
        () => false,
      );
      const traffic = startContinuous(d.devnet, { intervalMs: 700, opsPerTick: 2, seed: 701 });
      first.cut();
      const cutOff = { head: await d.head(), indexed: await d.indexedBlock() };
      await sleep(CUT_OFF_MS);
      const whileCutOff = { head: await d.head(), indexed: await d.indexedBlock() };
      first.restore();
      const backMs = await caughtUp(d, 'the indexer at the head through A again');
      await traffic.stop();
      const asked = Object.entries(wrong.methods).map(([method, n]) => `${method} ×${n}`);
      const askedMore = Object.keys(wrong.methods).some((m) => m !== 'eth_chainId');
      const saidWhy = await said;
      await matrix.record(d, {
        group: 'RPC provider',
        scenario: `another chain's URL after a failover (A,B; A cut off ${ms(CUT_OFF_MS)}, then back)`,
        figures: [
          `B (chain 1337) asked ${asked.join(', ') || 'nothing'}`,
          saidWhy ? 'said at warn with both chain ids' : 'never said',
          `${whileCutOff.head - cutOff.head} blocks produced while A was cut off, ${whileCutOff.indexed - cutOff.indexed} indexed`,
          `at the head through A ${ms(backMs)} after it answered again`,
        ],
        note:
          [
            askedMore ? `B was asked for more than its chain: ${asked.join(', ')}` : null,
            saidWhy ? null : 'the URL of another chain was never said',
          ]
            .filter(Boolean)
            .join('; ') || null,
      });
    } finally {
      await first.close();
      await wrong.stop();
      await other.stop();
    }
  });
}
