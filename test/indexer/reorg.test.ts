/**
 * Reorgs on a real anvil chain (the devnet's reorg helper drops the last N blocks and mines a
 * longer fork with moved, removed and new ops): after each, the indexer's data equals the new
 * canonical chain's ground truth, aggregates included, and the reorg is announced in the outbox.
 */
import { expect } from 'chai';
import { generate, reorg, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import type { Db } from '../../shared/db/client.js';
import { useTestDb } from '../helpers/db.js';
import { expectMatchesTruth } from './storedTruth.js';
import { devnetConfig, indexedBlock, quietLogger } from './support.js';

const DEPTHS = [1, 2, 4, 7, 10];

describe('indexer reorg handling', function () {
  this.timeout(300_000);
  const t = useTestDb();
  describe('reorgs of depth 1 to 10 while following the head', followingTests(t));
  const deep = useTestDb();
  describe('a reorg deeper than the stored window', deepReorgTests(deep));
});

function followingTests(t: { readonly db: Db }) {
  return function () {
    let devnet: Devnet;
    let indexer: Indexer;

    before(async () => {
      devnet = await startDevnet();
      await generate(devnet, { ops: 120, days: 2, seed: 5 });
      indexer = startIndexer({ db: t.db, config: devnetConfig(devnet.rpcUrl), log: quietLogger() });
      await indexer.syncNow();
    });

    after(async () => {
      await indexer?.stop();
      await devnet?.stop();
    });

    const matches = (got: unknown, want: unknown, what: string): void => {
      expect(got, what).to.deep.equal(want);
    };

    for (const depth of DEPTHS) {
      it(`ends equal to the new canonical chain after a reorg of depth ${depth}`, async () => {
        const before = await t.db.query<{ reorg_epoch: number }>('select reorg_epoch from indexer_state where chain_id = $1', [
          devnet.chainId,
        ]);
        const result = await reorg(devnet, depth, { seed: depth });
        await indexer.syncNow();
        const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
        expect(await indexedBlock(t.db, devnet.chainId)).to.equal(head);
        await expectMatchesTruth(t.db, devnet.truth, matches);

        const { rows } = await t.db.query<{ reorg_epoch: number }>('select reorg_epoch from indexer_state where chain_id = $1', [
          devnet.chainId,
        ]);
        expect(rows[0]!.reorg_epoch).to.equal(before.rows[0]!.reorg_epoch + 1);
        const { rows: events } = await t.db.query<{
          payload: { commonAncestor: number; removedFromBlock: number; removedUserOpHashes: string[] };
        }>(`select payload from outbox_events where chain_id = $1 and type = 'reorg' order by id desc limit 1`, [devnet.chainId]);
        const event = events[0]!.payload;
        expect(event.commonAncestor).to.equal(result.commonAncestor.number);
        expect(event.removedFromBlock).to.equal(result.commonAncestor.number + 1);
        expect([...event.removedUserOpHashes].sort()).to.deep.equal([...result.removedUserOpHashes, ...result.movedUserOpHashes].sort());
        // Every op on the new chain was announced again after the reorg event (moved ops included).
        const { rows: announced } = await t.db.query<{ user_op_hash: string }>(
          `select user_op_hash from outbox_events where chain_id = $1 and type = 'user_operation'
           and id > (select max(id) from outbox_events where chain_id = $1 and type = 'reorg')`,
          [devnet.chainId],
        );
        expect(announced.map((r) => r.user_op_hash).sort()).to.deep.equal([...result.movedUserOpHashes, ...result.newUserOpHashes].sort());
      });
    }
  };
}

function deepReorgTests(t: { readonly db: Db }) {
  return function () {
    let devnet: Devnet;
    let indexer: Indexer;

    before(async () => {
      devnet = await startDevnet();
      await generate(devnet, { ops: 40, days: 1, seed: 9, layout: { maxBundlesPerBlock: 1, maxOpsPerBundle: 2 } });
      // Headers are kept for 2 blocks past finality depth 0: a reorg of 6 reaches below them.
      indexer = startIndexer({
        db: t.db,
        config: devnetConfig(devnet.rpcUrl),
        log: quietLogger(),
        tuning: { reorgMarginBlocks: 2, initialLogRange: 1 },
      });
      await indexer.syncNow();
    });

    after(async () => {
      await indexer?.stop();
      await devnet?.stop();
    });

    it('is refused: nothing is deleted and the cursor stays', async () => {
      const cursor = await indexedBlock(t.db, devnet.chainId);
      const { rows: before } = await t.db.query<{ n: string }>('select count(*) as n from user_ops where chain_id = $1', [devnet.chainId]);
      await reorg(devnet, 6, { seed: 1 });
      const failure = await indexer.syncNow().then(
        () => null,
        (err: Error) => err,
      );
      expect(failure?.name).to.equal('DeepReorgError');
      expect(await indexedBlock(t.db, devnet.chainId)).to.equal(cursor);
      const { rows: after } = await t.db.query<{ n: string }>('select count(*) as n from user_ops where chain_id = $1', [devnet.chainId]);
      expect(after[0]!.n).to.equal(before[0]!.n);
    });
  };
}
