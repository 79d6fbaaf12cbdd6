/**
 * Indexer processes sharing networks, as the Procfile's `indexer` runs them (`indexer/main.ts` on
 * PostgreSQL, one real OS process each), against thin chain simulators following their heads:
 * a second process joins and gets its share of the networks; then the first is SIGKILLed while it
 * writes, and the second takes its networks over from their committed cursors — each network's
 * store equal to its simulator's truth, nothing lost or written twice.
 * Part of `npm run test:faults` (`--reduced`: 4 networks instead of 8). Prints a table: step, time.
 */
import { expect } from 'chai';
import type { SimChain } from '../../simchain/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { indexedBlock } from '../indexer/support.js';
import { chainsEnv, expectChainMatchesTruth, startThinChains, writerLocksOf } from '../indexer/support/networksUnderFault.js';
import { startChild, waitUntil, type Child } from './support/childProcess.js';

const REDUCED = process.argv.includes('--reduced') || process.env.FAULTS_REDUCED === '1';
const NETWORKS = ['base', 'optimism', 'gnosis', 'avalanche', 'matic', 'bsc', 'fantom', 'fuse'].slice(0, REDUCED ? 4 : 8);
/** The aims: a joining process takes its share, and the survivors a dead one's networks, within this. */
const AIM_MS = 30_000;

describe(`indexer processes sharing ${NETWORKS.length} networks${REDUCED ? ' (reduced run)' : ''}`, function () {
  this.timeout(300_000);
  const rows: string[] = [];
  let database: TestDatabase;
  let chains: SimChain[] = [];
  const children: Child[] = [];

  before(async () => {
    database = await createTestDatabase();
    chains = await startThinChains(NETWORKS, 1_000);
  });

  after(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await Promise.all(chains.map((c) => c.close()));
    await database?.drop();
    console.log(`\nIndexer processes sharing networks${REDUCED ? ' (reduced)' : ''}:\n${rows.map((r) => `  - ${r}`).join('\n')}`);
  });

  const locksOf = (pid: number): Promise<number> => writerLocksOf(database.db, pid);
  const atHeads = async (): Promise<boolean> =>
    (await Promise.all(chains.map((c) => indexedBlock(database.db, c.chainId)))).every((b, i) => b >= chains[i]!.head() - 1);

  it('a joining process gets its share; a SIGKILLed one has its networks resumed by the other, every network equal to its truth', async () => {
    const env = {
      ...chainsEnv(chains),
      DATABASE_URL: database.url!,
      LOG_FORMAT: 'json',
      LOG_LEVEL: process.env.FAULTS_DEBUG ? 'info' : 'warn',
    };
    const starts = chains.map((c) => c.head());
    const first = startChild('indexer-1', 'indexer/main.ts', { env: { ...env, LOG_LEVEL: 'info' } });
    children.push(first);
    await first.printed('indexer started');
    await waitUntil('every network at its head', atHeads, 90_000);
    expect(await locksOf(first.process.pid!)).to.equal(NETWORKS.length);

    const second = startChild('indexer-2', 'indexer/main.ts', { env: { ...env, LOG_LEVEL: 'info' } });
    children.push(second);
    // From the moment it is up (its modules loaded, its database reached): what it then takes is the split's doing.
    await second.printed('indexer started');
    const joined = Date.now();
    const half = Math.floor(NETWORKS.length / 2);
    await waitUntil('the second process holding its share', async () => (await locksOf(second.process.pid!)) === half, AIM_MS + 30_000);
    const shareMs = Date.now() - joined;
    rows.push(
      `a second process joined: it held ${half} of ${NETWORKS.length} networks' writer locks after ${(shareMs / 1000).toFixed(1)} s`,
    );
    expect(await locksOf(first.process.pid!), 'the first process kept the rest').to.equal(NETWORKS.length - half);
    expect(shareMs, 'share within the aim').to.be.below(AIM_MS);

    // Mid-batch: at 1 s blocks on 4–8 networks a batch is being written most of the time.
    await waitUntil('the networks at their heads again', atHeads, 60_000);
    await first.kill('SIGKILL');
    const killed = Date.now();
    await waitUntil(
      'the second process holding every lock',
      async () => (await locksOf(second.process.pid!)) === NETWORKS.length,
      AIM_MS + 30_000,
    );
    const takeoverMs = Date.now() - killed;
    await waitUntil('every network at its head after the takeover', atHeads, 60_000);
    const caughtUpMs = Date.now() - killed;
    rows.push(
      `the first SIGKILLed: the second held all ${NETWORKS.length} locks after ${(takeoverMs / 1000).toFixed(1)} s, every network at its head after ${(caughtUpMs / 1000).toFixed(1)} s`,
    );
    expect(takeoverMs, 'takeover within the aim').to.be.below(AIM_MS);
    await second.kill('SIGTERM');
    let ops = 0;
    for (const [i, chain] of chains.entries())
      ops += await expectChainMatchesTruth(database.db, chain, starts[i]!, (got, want, what) => expect(got, what).to.deep.equal(want));
    rows.push(`every network's store equal to its simulator's truth (${ops} ops in all)`);
  });
});
