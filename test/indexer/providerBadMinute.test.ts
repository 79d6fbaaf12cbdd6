/**
 * A provider's bad minute, not a plan's limit: while the devnet produces a block every 0.7 s, the
 * only URL fails a share of requests (HTTP 5xx, random 429s without Retry-After, JSON-RPC errors,
 * added latency, `null` for a block it announced a moment ago), then cuts every answer off or
 * drops the socket, then heals. The indexer keeps advancing through the first phase, catches up
 * soon after healing, and stores exactly the truth.
 *
 * The phases are shortened (BAD_MINUTE_PHASES_S="<bad>,<worse>" sets them, e.g. "60,30" for the
 * full profile); FAULT_FIGURES=1 prints what docs/reliability.md quotes.
 */
import { expect } from 'chai';
import { generate, startContinuous, startDevnet, type ContinuousTraffic, type Devnet } from '../../devnet/index.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import { useTestDb } from '../helpers/db.js';
import { BAD_MINUTE, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { expectMatchesTruth } from './storedTruth.js';
import { devnetConfig, indexedBlock, quietLogger } from './support.js';

const [BAD_S, WORSE_S] = (process.env.BAD_MINUTE_PHASES_S ?? '20,10').split(',').map(Number) as [number, number];
/** Generous: a healed provider answers at once; the indexer is a few polls away from the head. */
const CATCH_UP_BOUND_MS = 30_000;
/** How long the catch-up is waited for: past the bound when figures are asked for, so a slow one is measured. */
const CATCH_UP_WAIT_MS = process.env.FAULT_FIGURES ? 4 * CATCH_UP_BOUND_MS : CATCH_UP_BOUND_MS;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('indexer through a provider’s bad minute', function () {
  this.timeout(60_000 + (BAD_S + WORSE_S) * 1000 + CATCH_UP_WAIT_MS + 30_000);
  const t = useTestDb();
  let devnet: Devnet;
  let proxy: FaultProxy;
  let indexer: Indexer | undefined;
  let traffic: ContinuousTraffic | undefined;

  before(async () => {
    devnet = await startDevnet();
    await generate(devnet, { ops: 40, days: 1, seed: 21 });
    proxy = await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, seed: 5 });
  });

  after(async () => {
    await indexer?.stop();
    await traffic?.stop();
    await proxy?.stop();
    await devnet?.stop();
  });

  const head = async (): Promise<number> => Number(await devnet.rpc.call<string>('eth_blockNumber'));
  const indexed = (): Promise<number> => indexedBlock(t.db, devnet.chainId);
  const callsPerRequest = (since: { calls: number; requests: number }): number => {
    const calls = Object.values(proxy.methods).reduce((a, b) => a + b, 0) - since.calls;
    return Math.round((calls / Math.max(1, proxy.stats.requests - since.requests)) * 10) / 10;
  };
  const counts = () => ({ calls: Object.values(proxy.methods).reduce((a, b) => a + b, 0), requests: proxy.stats.requests });

  it('advances through the faults, catches up soon after the provider heals, and stores exactly the truth', async () => {
    // The defaults production runs with (a 1 s poll, the default retries and batch size).
    indexer = startIndexer({ db: t.db, config: devnetConfig(proxy.url), log: quietLogger() });
    await indexer.syncNow();
    traffic = startContinuous(devnet, { intervalMs: 700, opsPerTick: 2, seed: 8 });
    await sleep(3_000);
    const healthy = counts();
    await sleep(2_000);
    const healthyCallsPerRequest = callsPerRequest(healthy);

    const badFrom = { head: await head(), indexed: await indexed() };
    proxy.configure(BAD_MINUTE.bad);
    await sleep(BAD_S * 1000);
    const badTo = { head: await head(), indexed: await indexed() };
    proxy.configure(BAD_MINUTE.worse);
    await sleep(WORSE_S * 1000);
    proxy.configure(BAD_MINUTE.healed);
    const healedAt = performance.now();
    const healed = counts();
    const behindAtHeal = (await head()) - (await indexed());

    // Caught up: within two blocks of the producing head (a poll is 1 s, a block 0.7 s).
    let catchUpMs: number | null = null;
    while (performance.now() - healedAt < CATCH_UP_WAIT_MS) {
      if ((await head()) - (await indexed()) <= 2) {
        catchUpMs = Math.round(performance.now() - healedAt);
        break;
      }
      await sleep(100);
    }
    const afterHealCallsPerRequest = callsPerRequest(healed);
    if (process.env.FAULT_FIGURES)
      process.stdout.write(
        `${JSON.stringify({
          phasesS: [BAD_S, WORSE_S],
          badMinute: { produced: badTo.head - badFrom.head, indexed: badTo.indexed - badFrom.indexed },
          behindAtHeal,
          catchUpMs,
          behindAtEnd: (await head()) - (await indexed()),
          callsPerRequest: { healthy: healthyCallsPerRequest, afterHeal: afterHealCallsPerRequest },
          injected: { ...proxy.stats },
        })}\n`,
      );
    expect(catchUpMs, 'caught up after the provider healed').to.be.a('number').and.at.most(CATCH_UP_BOUND_MS);

    // Through the bad minute the indexer keeps up with at least half the blocks produced.
    expect(badTo.indexed - badFrom.indexed, 'blocks indexed through the bad minute').to.be.at.least((badTo.head - badFrom.head) / 2);
    expect(proxy.stats.http429, 'random 429s injected').to.be.greaterThan(0);

    await traffic.stop();
    traffic = undefined;
    // A whole pass to the last block, with what waits at the head (earlier transfers of accounts
    // that became known) done.
    await indexer.syncNow();
    await indexer.stop();
    indexer = undefined;
    await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
  });
});
