/** Restart recovery: the indexer SIGKILLed after its first writes, twice inside a burst, once at the head. */
import { mineTrafficBlock } from '../../../devnet/index.js';
import { Random } from '../../../devnet/random.js';
import { waitUntil } from '../../faults/support/childProcess.js';
import { PLAN, type Matrix } from '../judging.js';

export function restartCases(matrix: Matrix): void {
  it('restart recovery: the indexer SIGKILLed after its first writes, twice inside a burst, once at the head while blocks arrive', async () => {
    const d = await matrix.deploy('reliability restarts');
    const rng = new Random(481);
    const kills: string[] = [];
    const killAt = async (label: string, until: (indexedBlock: number) => boolean): Promise<void> => {
      let indexedBlock = -1;
      await waitUntil(`the indexer to reach ${label}`, async () => until((indexedBlock = await d.indexedBlock())), 120_000);
      await d.product.kill('indexer');
      kills.push(`${label}: killed at block ${indexedBlock} of ${await d.head()}`);
      d.product.restart('indexer');
    };
    // A burst of blocks released at once while the indexer is down: it finds them all at its start.
    await d.product.kill('indexer');
    const from = await d.head();
    for (let i = 0; i < PLAN.burstBlocks; i++) await mineTrafficBlock(d.devnet, rng, 2);
    const to = await d.head();
    d.product.restart('indexer');
    await killAt('after its first writes', (b) => b > from);
    await killAt('a third into the burst', (b) => b >= from + Math.floor((to - from) / 3));
    await killAt('two thirds into the burst', (b) => b >= from + Math.floor((2 * (to - from)) / 3));
    await waitUntil('the indexer at the head', async () => (await d.indexedBlock()) >= to, 120_000);
    // At the head, dead while blocks keep arriving.
    await d.product.kill('indexer');
    const dead = await d.head();
    for (let i = 0; i < 5; i++) await mineTrafficBlock(d.devnet, rng, 2);
    kills.push(`at the head: killed at block ${dead}, ${(await d.head()) - dead} blocks mined while dead`);
    d.product.restart('indexer');
    await matrix.record(d, { group: 'restart', scenario: `SIGKILL ×4 (${to - from}-block burst)`, figures: kills });
  });
}
