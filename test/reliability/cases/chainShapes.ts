/**
 * What the chain itself sends: hostile values (a NUL in a symbol, an emoji, tab and newline in a
 * name, a transfer of 2²⁵⁶−1), blocks at the head (how soon an op is readable), and a chain that
 * stalls and then jumps.
 */
import { expect } from 'chai';
import { mineTrafficBlock } from '../../../devnet/index.js';
import { Random } from '../../../devnet/random.js';
import { callApi } from '../../faults/support/apiLoad.js';
import { waitUntil } from '../../faults/support/childProcess.js';
import { MAX_UINT256, deployToken, mintPlain, plainRevertAccounts, transferInOp } from '../../indexer/support/hostileChain.js';
import { PLAN, ms, quantile, sleep, type Matrix } from '../judging.js';

export function chainShapeCases(matrix: Matrix): void {
  it('hostile values: a NUL in a symbol, an emoji, tab and newline in a name, a transfer of 2²⁵⁶−1', async () => {
    const d = await matrix.deploy('reliability hostile');
    const [holder, receiver] = plainRevertAccounts(d.devnet);
    const token = await deployToken(d.devnet, 'emoji 🦄\ttab\nnewline', 'H\u0000X');
    await mintPlain(d.devnet, token, holder!.address, MAX_UINT256);
    const op = await transferInOp(d.devnet, holder!, { token, to: receiver!.address, amount: MAX_UINT256 });
    await waitUntil('the transfer indexed', async () => (await d.status()).indexedBlock >= (await d.head()), 60_000);
    const { body } = await callApi(
      d.product.webUrl,
      d.product.key,
      `/v0/getAddressERC20Transfers?network=devnet&address=${receiver!.address}&first=100`,
    );
    const mine = (body as Array<{ userOpHash: string; asset: string; rawContract: { address: string; value: string } }>).filter(
      (t) => t.rawContract.address === token,
    );
    expect(mine.map((t) => [t.userOpHash, t.asset, BigInt(t.rawContract.value)])).to.deep.equal([[op, 'HX', MAX_UINT256]]);
    await matrix.record(d, {
      group: 'hostile values',
      scenario: 'NUL symbol, emoji/tab/newline name, 2²⁵⁶−1',
      figures: ['symbol stored "HX" (NUL removed), name and amount exact'],
    });
  });

  for (const transport of ['poll (default)', 'WebSocket'] as const) {
    it(`head latency over ${PLAN.latencySamples} blocks 2 s apart, ${transport}: mined → readable in the API`, async () => {
      const d = await matrix.deploy(`reliability latency ${transport}`, {
        // INDEXER_POLL_INTERVAL_MS at its default (the suite's processes poll faster).
        env: (devnet) => ({
          INDEXER_POLL_INTERVAL_MS: '2000',
          ...(transport === 'WebSocket' ? { RPC_WS_URL_DEVNET: devnet.rpcUrl.replace(/^http/, 'ws') } : {}),
        }),
      });
      const rng = new Random(483);
      const samples: number[] = [];
      for (let i = 0; i < PLAN.latencySamples; i++) {
        await sleep(2_000);
        const block = await mineTrafficBlock(d.devnet, rng, 1);
        const hash = d.devnet.truth.userOps.find((o) => o.blockNumber === block!.number)?.userOpHash;
        if (!hash) continue;
        await waitUntil(
          'the op readable',
          async () => {
            const { body } = await callApi(d.product.webUrl, d.product.key, `/v0/getUserOp?network=devnet&hash=${hash}`);
            return ((body as { userOps?: unknown[] }).userOps ?? []).length > 0;
          },
          30_000,
        );
        samples.push(Date.now() - block!.minedAtMs);
      }
      const figures = [`median ${ms(quantile(samples, 0.5))}`, `p95 ${ms(quantile(samples, 0.95))}`, `max ${ms(Math.max(...samples))}`];
      await matrix.record(d, { group: 'head latency', scenario: transport, figures });
    });
  }

  it(`a chain that stalls, then jumps ${PLAN.jumpBlocks} blocks`, async () => {
    const d = await matrix.deploy('reliability stall');
    await sleep(PLAN.stallMs);
    const from = await d.head();
    await d.devnet.rpc.call('anvil_mine', [`0x${PLAN.jumpBlocks.toString(16)}`]);
    const t0 = performance.now();
    await waitUntil('the indexer past the jump', async () => (await d.status()).indexedBlock >= from + PLAN.jumpBlocks, 120_000);
    await matrix.record(d, {
      group: 'stall and jump',
      scenario: `stalled ${ms(PLAN.stallMs)}, then +${PLAN.jumpBlocks} blocks`,
      figures: [`caught up ${ms(performance.now() - t0)} after the jump`],
    });
  });
}
