/** Reorgs of every shape: tip, 3 and 12 deep, shortening, repeated, during backfill, beyond finality. */
import { mineTrafficBlock, reorg } from '../../../devnet/index.js';
import { Random } from '../../../devnet/random.js';
import { waitUntil } from '../../faults/support/childProcess.js';
import { sleep, type Matrix } from '../judging.js';

export function reorgCases(matrix: Matrix): void {
  it('reorgs of every shape: tip, 3 and 12 deep, shortening, repeated, during backfill, beyond finality', async () => {
    const d = await matrix.deploy('reliability reorgs');
    const rng = new Random(482);
    const cases: Array<[string, () => Promise<string>]> = [
      ['tip (1 deep)', async () => `${(await reorg(d.devnet, 1, { seed: 1 })).removedUserOpHashes.length} ops removed`],
      ['3 deep', async () => `${(await reorg(d.devnet, 3, { seed: 3 })).removedUserOpHashes.length} ops removed`],
      ['12 deep', async () => `${(await reorg(d.devnet, 12, { seed: 12 })).removedUserOpHashes.length} ops removed`],
      [
        'shortening (6 blocks replaced by fewer)',
        async () => {
          const before = await d.head();
          const r = await reorg(d.devnet, 6, { seed: 6, length: 3 });
          return `head ${before} → ${await d.head()}, ${r.removedUserOpHashes.length} ops removed`;
        },
      ],
      [
        'repeated (3 reorgs 600 ms apart)',
        async () => {
          let removed = 0;
          for (let i = 0; i < 3; i++) {
            removed += (await reorg(d.devnet, 3, { seed: 30 + i })).removedUserOpHashes.length;
            await sleep(600);
          }
          return `${removed} ops removed`;
        },
      ],
      [
        'during backfill (~80 blocks behind, unread blocks rewritten)',
        async () => {
          d.product.signal('indexer', 'SIGSTOP');
          for (let i = 0; i < 80; i++) await mineTrafficBlock(d.devnet, rng, 1);
          const behind = (await d.head()) - (await d.status()).indexedBlock;
          const r = await reorg(d.devnet, 10, { seed: 80 });
          d.product.signal('indexer', 'SIGCONT');
          return `${behind} blocks behind, ${r.removedUserOpHashes.length} unread ops rewritten`;
        },
      ],
    ];
    for (const [scenario, run] of cases) {
      await waitUntil('the indexer at the head', async () => (await d.status()).indexedBlock >= (await d.head()), 120_000);
      const figure = await run();
      await matrix.record(d, { group: 'reorg', scenario, figures: [figure] });
    }
    // Deeper than the reorg window (finality depth + margin: 64 blocks on the devnet): no indexer
    // can repair what it no longer keeps the headers of. Reported, never silent.
    await waitUntil('the indexer at the head', async () => (await d.status()).indexedBlock >= (await d.head()), 120_000);
    while ((await d.head()) < 75) await mineTrafficBlock(d.devnet, rng, 1);
    const deep = await reorg(d.devnet, 70, { seed: 70 });
    await matrix.record(d, {
      group: 'reorg',
      scenario: 'beyond finality (70 deep, window 64)',
      figures: [`${deep.removedUserOpHashes.length} ops removed`],
    });
  });
}
