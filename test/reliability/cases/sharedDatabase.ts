/**
 * Two indexer processes on one database (network sharing): the second waits as the devnet's
 * standby while the first writes; the first is SIGKILLed while the chain produces, and the second
 * takes the network over from its committed cursor.
 */
import { startContinuous } from '../../../devnet/index.js';
import { waitUntil } from '../../faults/support/childProcess.js';
import { writerLocksOf } from '../../indexer/support/networksUnderFault.js';
import { RECOVERY_BOUND_MS, ms, sleep, type Matrix } from '../judging.js';

export function sharedDatabaseCases(matrix: Matrix): void {
  it('two indexer processes on one database: the writer SIGKILLed, the other takes the network over', async () => {
    const d = await matrix.deploy('reliability two indexers');
    const locks = (name: 'indexer' | 'indexer2') => writerLocksOf(d.db, d.product.pid(name));
    d.product.restart('indexer2');
    await waitUntil('the second indexer up, waiting for the writer lock', async () => {
      const { rows } = await d.db.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name like $1`, [
        `opscan-indexer/%-${d.product.pid('indexer2')}-%`,
      ]);
      return rows[0]!.n > 0;
    });
    const before = { first: await locks('indexer'), second: await locks('indexer2') };
    const traffic = startContinuous(d.devnet, { intervalMs: 700, opsPerTick: 2, seed: 702 });
    await sleep(3_000);
    const killedAt = await d.indexedBlock();
    await d.product.kill('indexer');
    const t0 = performance.now();
    await waitUntil('the second indexer holding the writer lock', async () => (await locks('indexer2')) === 1, RECOVERY_BOUND_MS);
    const takeoverMs = performance.now() - t0;
    await waitUntil("the second indexer past the first one's cursor", async () => (await d.indexedBlock()) > killedAt, RECOVERY_BOUND_MS);
    const advancingMs = performance.now() - t0;
    await traffic.stop();
    await matrix.record(d, {
      group: 'network sharing',
      scenario: 'two indexer processes, the writer SIGKILLed while it writes',
      figures: [
        `writer locks before: first ${before.first}, second ${before.second}`,
        `killed at block ${killedAt}; the second held the lock ${ms(takeoverMs)} after, wrote past block ${killedAt} ${ms(advancingMs)} after`,
      ],
    });
  });
}
