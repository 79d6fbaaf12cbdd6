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
import request from 'supertest';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { testDeps } from '../helpers/app.js';
import { useWebhookHarness } from '../webhooks/support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/support/receiver.js';
import { expectMatchesTruth } from './storedTruth.js';
import { expectStoredEconomicsMatchChain } from './support/bundleEconomics.js';
import { devnetConfig, indexedBlock, quietLogger } from './support.js';
import { chainModuleEvents, installedAfter, sendModuleOp, setUpModularAccount } from './support/moduleOps.js';
import { createTestKey } from '../helpers/app.js';

const DEPTHS = [1, 2, 4, 7, 10];
/** The deep case: a reorg of DEPTH blocks on a network whose finality depth is FINALITY. */
const DEPTH = 10;
const FINALITY = 5;

describe('indexer reorg handling', function () {
  this.timeout(300_000);
  const t = useTestDb();
  describe('reorgs of depth 1 to 10 while following the head', followingTests(t));
  const deep = useWebhookHarness();
  describe('a reorg deeper than finality and the stored headers', deepReorgTests(deep));
  const modules = useTestDb();
  describe('a reorg of ERC-7579 module installs', moduleReorgTests(modules));
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
        await expectStoredEconomicsMatchChain(t.db, devnet.chainId, devnet.rpc);

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

function deepReorgTests(h: ReturnType<typeof useWebhookHarness>) {
  return function () {
    let devnet: Devnet;
    let indexer: Indexer | undefined;
    let receiver: Receiver | undefined;
    let deps: Deps | undefined;

    before(async () => {
      devnet = await startDevnet();
      await generate(devnet, { ops: 40, days: 1, seed: 9, layout: { maxBundlesPerBlock: 1, maxOpsPerBundle: 2 } });
    });

    after(async () => {
      await indexer?.stop();
      await receiver?.close();
      await deps?.services.close();
      await devnet?.stop();
    });

    it('is repaired and reported: the data, a cached final answer and the webhooks agree with the chain', async () => {
      const env = { FINALITY_DEPTH_DEVNET: String(FINALITY) };
      // Webhooks hear of events recorded after they were created: they come first.
      receiver = await startReceiver();
      const bundlers = [...new Set(devnet.truth.userOps.map((o) => o.bundler))];
      for (const bundler of bundlers) await h.createWebhook(receiver.url, 'BUNDLER', bundler);
      await h.startDispatcher({}, env);
      // Headers are kept for 2 blocks past finality depth 5: a reorg of 10 reaches below them.
      indexer = startIndexer({
        db: h.db,
        config: devnetConfig(devnet.rpcUrl, env),
        log: quietLogger(),
        tuning: { reorgMarginBlocks: 2, initialLogRange: 1 },
      });
      await indexer.syncNow();
      deps = testDeps(h.db, env);
      const api = request(createApp(deps));
      const getOp = (hash: string) => api.get(`/v0/getUserOp?network=devnet&hash=${hash}`).set('x-api-key', h.key);

      // Ops of the blocks the reorg replaces that were final: sent to the webhooks, cached as final.
      const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
      const final = devnet.truth.userOps.filter((o) => o.blockNumber > head - DEPTH && o.blockNumber <= head - FINALITY);
      expect(final.length, 'ops in final blocks the reorg replaces').to.be.greaterThan(0);
      const sentBefore = devnet.truth.userOps.filter((o) => o.blockNumber <= head - FINALITY).length;
      await receiver.waitFor(() => receiver!.delivered().size >= sentBefore, 60_000);
      for (const op of final) {
        expect((await getOp(op.userOpHash)).body.userOps, op.userOpHash).to.have.length(1);
        const again = await getOp(op.userOpHash);
        expect(again.headers['x-cache'], 'a final answer is cached').to.equal('hit');
      }

      const result = await reorg(devnet, DEPTH, { seed: 1 });
      // Blocks keep coming after it.
      await generate(devnet, { ops: 6, days: 1, seed: 12, layout: { maxBundlesPerBlock: 1, maxOpsPerBundle: 2 } });
      await indexer.syncNow();
      const newHead = Number(await devnet.rpc.call<string>('eth_blockNumber'));
      expect(await indexedBlock(h.db, devnet.chainId)).to.equal(newHead);
      await expectMatchesTruth(h.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
      const { rows } = await h.db.query<{ final_epoch: number }>('select final_epoch from indexer_state where chain_id = $1', [
        devnet.chainId,
      ]);
      expect(rows[0]!.final_epoch, 'a reorg beyond finality is counted').to.equal(1);

      // The API answers from the new chain, however long a final answer was to be kept.
      const blockOf = new Map(devnet.truth.userOps.map((o) => [o.userOpHash, o.blockNumber]));
      for (const op of final) {
        const answer = (await getOp(op.userOpHash)).body.userOps as Array<{ blockNumber: string | number }>;
        const now = blockOf.get(op.userOpHash);
        if (now === undefined) expect(answer, `${op.userOpHash} left the chain`).to.deep.equal([]);
        else
          expect(
            answer.map((o) => Number(o.blockNumber)),
            `${op.userOpHash} moved`,
          ).to.deep.equal([now]);
      }

      // The webhooks hear which of the ops they were sent left the chain, beyond finality.
      const left = new Set([...result.removedUserOpHashes, ...result.movedUserOpHashes]);
      const sentAndLeft = final.map((o) => o.userOpHash).filter((hash) => left.has(hash));
      expect(sentAndLeft.length).to.be.greaterThan(0);
      const notices = () =>
        receiver!.received
          .map(
            (r) =>
              JSON.parse(r.body) as { type: string; data: { userOpHashes: string[]; beyondFinality: boolean; commonAncestor: number } },
          )
          .filter((b) => b.type === 'reorg');
      const announced = () => new Set(notices().flatMap((n) => n.data.userOpHashes));
      await receiver.waitFor(() => sentAndLeft.every((hash) => announced().has(hash)), 30_000);
      for (const notice of notices()) {
        expect(notice.data.beyondFinality).to.equal(true);
        expect(notice.data.commonAncestor).to.be.at.most(result.commonAncestor.number);
      }
      expect(
        [...announced()].filter((hash) => !left.has(hash)),
        'ops listed that stayed on the chain',
      ).to.deep.equal([]);
    });
  };
}

function moduleReorgTests(t: { readonly db: Db }) {
  return function () {
    let devnet: Devnet;
    let indexer: Indexer;
    let deps: Deps;

    before(async () => {
      devnet = await startDevnet();
      indexer = startIndexer({ db: t.db, config: devnetConfig(devnet.rpcUrl), log: quietLogger() });
      deps = testDeps(t.db);
    });

    after(async () => {
      await indexer?.stop();
      await deps?.services.close();
      await devnet?.stop();
    });

    it('keeps the module events the chain has, and unwinds an install the reorg removes', async () => {
      const key = await createTestKey(t.db);
      const api = request(createApp(deps));
      const m = await setUpModularAccount(devnet);
      /** What opscan answers for the account, against what the chain's logs and receipts say. */
      const expectEqualToChain = async (what: string) => {
        await indexer.syncNow();
        const onChain = (await chainModuleEvents(devnet.rpc)).filter((e) => e.account === m.account);
        const res = await api.get('/v0/getAccountModules').query({ network: 'devnet', address: m.account }).set('x-api-key', key);
        expect(res.status, what).to.equal(200);
        const history = res.body.history as Array<Record<string, string>>;
        expect(
          history.map((e) => ({
            action: e.action,
            moduleTypeId: e.moduleTypeId,
            module: e.module,
            blockNumber: e.blockNumber,
            transactionHash: e.transactionHash,
          })),
          `${what}: history`,
        ).to.deep.equal(
          onChain.map(({ action, moduleTypeId, module, blockNumber, transactionHash }) => ({
            action,
            moduleTypeId,
            module,
            blockNumber,
            transactionHash,
          })),
        );
        const modules = res.body.modules as Array<{ moduleTypeId: string; module: string }>;
        expect(modules.map((x) => `${x.moduleTypeId}:${x.module}`).sort(), `${what}: modules`).to.deep.equal(installedAfter(onChain));
        return { history, modules, onChain };
      };

      // Deployed and given the executor in one op, then the executor uninstalled and installed again.
      const first = await sendModuleOp(devnet, m, 'install');
      const installedAtDeployment = await expectEqualToChain('after the deployment');
      expect(installedAtDeployment.history).to.have.length(1);
      expect(installedAtDeployment.history[0]!.userOpHash).to.equal(first.userOpHash);
      await sendModuleOp(devnet, m, 'uninstall');
      const ancestor = await devnet.rpc.call<{ number: string; hash: string }>('eth_getBlockByNumber', ['latest', false]);
      await expectEqualToChain('after the uninstall');
      const again = await sendModuleOp(devnet, m, 'install');
      const reinstalled = await expectEqualToChain('after the second install');
      const { blockHash } = await devnet.rpc.call<{ blockHash: string }>('eth_getTransactionReceipt', [again.transactionHash]);
      const block = await devnet.rpc.call<{ number: string; timestamp: string }>('eth_getBlockByHash', [blockHash, false]);
      expect(reinstalled.modules).to.deep.equal([
        {
          moduleTypeId: '2',
          moduleType: 'executor',
          module: m.executor,
          installedAt: {
            blockNumber: String(Number(block.number)),
            blockTime: String(Number(block.timestamp)),
            transactionHash: again.transactionHash,
            userOpHash: again.userOpHash,
          },
        },
      ]);
      const top = await api.get('/v0/getTopModules').query({ network: 'devnet' }).set('x-api-key', key);
      expect(top.body).to.deep.equal({
        modules: [{ module: m.executor, moduleTypeIds: ['2'], moduleTypes: ['executor'], accountsLength: '1' }],
      });

      // The second install's block is replaced by two empty ones: a longer fork without it.
      await devnet.rpc.call('anvil_rollback', [1]);
      const head = await devnet.rpc.call<{ hash: string }>('eth_getBlockByNumber', ['latest', false]);
      expect(head.hash).to.equal(ancestor.hash);
      await devnet.rpc.call('evm_mine', []);
      await devnet.rpc.call('evm_mine', []);
      const unwound = await expectEqualToChain('after the reorg');
      expect(unwound.history.map((e) => e.action)).to.deep.equal(['installed', 'uninstalled']);
      expect(unwound.modules).to.deep.equal([]);
      const topAfter = await api.get('/v0/getTopModules').query({ network: 'devnet' }).set('x-api-key', key);
      expect(topAfter.body).to.deep.equal({ modules: [] });
    });
  };
}
