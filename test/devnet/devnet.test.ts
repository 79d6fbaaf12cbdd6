/**
 * The devnet against a real anvil: the generated ground truth must agree with the chain's own logs
 * and calldata in every field, cover every kind of traffic, survive reorgs and continuous mode.
 */
import { expect } from 'chai';
import { Interface } from 'ethers';
import { createRequire } from 'node:module';
import { generate, reorg, startContinuous, startDevnet, type Devnet, type GroundTruth } from '../../devnet/index.js';
import { EXECUTE_BATCH_SIGNATURES } from '../../devnet/calls.js';
import { readChain } from './chain-view.js';
import { allProblems } from './truth-checks.js';
import { deployVendorContracts } from '../../devnet/realistic/vendorContracts.js';
import { CANONICAL_ENTRYPOINTS, TOPICS } from '../../shared/chain/constants.js';

const require = createRequire(import.meta.url);
const VERSIONS = ['v0.6', 'v0.7', 'v0.8'] as const;
const SELECTOR = {
  execute: '0xb61d27f6',
  batch06: '0x18dfb3c7',
  batch07: '0x47e1da2a',
  batchCalls: '0x34fcd5be',
  errorString: '0x08c379a0',
  executeError: '0x5a154675',
};

describe('devnet', function () {
  this.timeout(300_000);
  let devnet: Devnet;
  let truth: GroundTruth;

  before(async () => {
    devnet = await startDevnet();
    truth = structuredClone(await generate(devnet, { ops: 400, days: 3, seed: 11 }));
  });

  after(async () => {
    await devnet?.stop();
  });

  it('runs the real EntryPoints at their canonical addresses', async () => {
    const view = await readChain(devnet.rpcUrl, truth);
    for (const v of VERSIONS) {
      const pkg = `ep0${v.slice(-1)}`;
      const artifact = require(`${pkg}/artifacts/EntryPoint.json`) as { deployedBytecode: string };
      expect(truth.entryPoints[v]).to.equal(CANONICAL_ENTRYPOINTS[v]);
      const code = await view.provider.getCode(truth.entryPoints[v]);
      expect(code.length, `${v} runtime size`).to.equal(artifact.deployedBytecode.length);
    }
    // v0.8's SenderCreator only serves its own EntryPoint: deployments through it prove it is wired right.
    const ep08 = new Interface(['function senderCreator() view returns (address)']);
    const creator = ep08.decodeFunctionResult(
      'senderCreator',
      await view.provider.call({ to: truth.entryPoints['v0.8'], data: ep08.encodeFunctionData('senderCreator') }),
    )[0];
    expect(await view.provider.getCode(String(creator))).to.not.equal('0x');
    expect(
      truth.accounts.filter((a) => truth.userOps.find((o) => o.userOpHash === a.userOpHash)?.entryPointVersion === 'v0.8'),
    ).to.have.length.greaterThan(0);
  });

  it("encodes executeBatch the way each SimpleAccount version's ABI declares it", () => {
    for (const v of VERSIONS) {
      const { abi } = require(`ep0${v.slice(-1)}/artifacts/SimpleAccount.json`) as { abi: [] };
      const signatures: string[] = [];
      new Interface(abi).forEachFunction((f) => signatures.push(f.format('sighash')));
      expect(signatures).to.include('execute(address,uint256,bytes)');
      expect(signatures).to.include(EXECUTE_BATCH_SIGNATURES[`simple-${v}`]);
    }
  });

  it('agrees with the chain: events, calldata, revert reasons, accounts, transfers, days', async () => {
    const problems = await allProblems(await readChain(devnet.rpcUrl, truth), truth);
    expect(problems.slice(0, 20)).to.deep.equal([]);
    expect(truth.userOps).to.have.length(400);
  });

  it('covers every kind of traffic', () => {
    const ops = truth.userOps;
    const c = truth.contracts;
    for (const v of VERSIONS) {
      const mine = ops.filter((o) => o.entryPointVersion === v);
      const factories = new Set(mine.map((o) => o.factory));
      expect(factories, `${v} factories`).to.include.members([c[`simpleAccountFactory.${v}`], c[`miniAccountFactory.${v}`]]);
      expect(new Set(mine.map((o) => o.paymaster)), `${v} paymasters`).to.include.members([
        null,
        c[`sponsorPaymaster.${v}`],
        c[`postOpPaymaster.${v}`],
      ]);
      expect(
        mine.some((o) => !o.success && o.revertReason?.startsWith(SELECTOR.errorString)),
        `${v} revert with reason`,
      ).to.equal(true);
      expect(
        mine.some((o) => !o.success && o.revertReason === null),
        `${v} revert without data`,
      ).to.equal(true);
      expect(
        mine.some((o) => o.callData.startsWith(SELECTOR.execute)),
        `${v} execute`,
      ).to.equal(true);
    }
    const selectors = new Set(ops.map((o) => o.callData.slice(0, 10)));
    expect([...selectors]).to.include.members([SELECTOR.batch06, SELECTOR.batch07, SELECTOR.batchCalls]);
    const batch07 = new Interface(['function executeBatch(address[],uint256[],bytes[])']);
    const valueArrays = ops
      .filter((o) => o.callData.startsWith(SELECTOR.batch07))
      .map((o) => (batch07.decodeFunctionData('executeBatch', o.callData)[1] as bigint[]).length);
    expect(valueArrays, 'v0.7 batches with and without a value array')
      .to.include(0)
      .and.satisfy((a: number[]) => a.some((n) => n > 0));
    expect(
      ops.some((o) => o.revertReason?.startsWith(SELECTOR.executeError)),
      'v0.8 ExecuteError',
    ).to.equal(true);
    expect(new Set(truth.transfers.map((t) => t.standard))).to.have.all.keys('ERC20', 'ERC721', 'ERC1155', 'NATIVE');
    expect(new Set(truth.transfers.filter((t) => t.standard === 'ERC20').map((t) => t.token))).to.have.all.keys(
      c['erc20.usd6']!,
      c['erc20.dai18']!,
    );
    expect(
      ops.some((o) => BigInt(o.nonce) >> 64n !== 0n),
      '2D nonce key',
    ).to.equal(true);

    const b = truth.bundles;
    expect(b.some((x) => x.userOpHashes.length === 1) && b.some((x) => x.userOpHashes.length > 5), 'bundle sizes').to.equal(true);
    expect(new Set(b.map((x) => x.bundler)).size, 'bundlers').to.be.at.least(3);
    expect(b.some((x) => x.beneficiary !== x.bundler) && b.some((x) => x.beneficiary === x.bundler), 'beneficiaries').to.equal(true);
    expect(
      b.some((x) => x.bundleIndex === 1),
      'two bundles in one transaction',
    ).to.equal(true);
    const perBlock = new Map<number, Set<string>>();
    for (const x of b) perBlock.set(x.blockNumber, new Set([...(perBlock.get(x.blockNumber) ?? []), x.entryPoint]));
    const bundlesPerBlock = (n: number): number => b.filter((x) => x.blockNumber === n).length;
    expect(
      [...perBlock.keys()].some((n) => bundlesPerBlock(n) > 1),
      'several bundles in a block',
    ).to.equal(true);
    expect(
      [...perBlock.values()].some((eps) => eps.size === 3),
      'v0.6, v0.7 and v0.8 in one block',
    ).to.equal(true);
    expect(
      b.some((x) => new Set(x.userOpHashes.map((h) => ops.find((o) => o.userOpHash === h)!.sender)).size < x.userOpHashes.length),
      'one sender twice in a bundle',
    ).to.equal(true);
    expect(
      b.some((x) => x.userOpHashes.filter((h) => ops.find((o) => o.userOpHash === h)!.factory).length > 1),
      'two deployments in a bundle',
    ).to.equal(true);

    expect(truth.days.length, 'UTC days').to.be.at.least(3);
    for (const d of truth.days) expect(d.userOps, `ops on day ${d.day}`).to.be.greaterThan(20);
  });

  describe('reorgs', () => {
    for (const depth of [1, 4, 10]) {
      it(`replaces the last ${depth} block(s) with different blocks, and the truth follows`, async () => {
        const before = structuredClone(devnet.truth);
        const result = await reorg(devnet, depth, { seed: depth });
        const view = await readChain(devnet.rpcUrl, devnet.truth);
        const ancestor = result.commonAncestor.number;

        expect(result.oldBlocks.map((x) => x.number)).to.deep.equal(Array.from({ length: depth }, (_, i) => ancestor + 1 + i));
        expect(result.newBlocks.length).to.be.greaterThan(depth);
        expect(view.blockHashes.get(ancestor)).to.equal(result.commonAncestor.hash);
        for (const old of result.oldBlocks) expect(view.blockHashes.get(old.number), `height ${old.number}`).to.not.equal(old.hash);

        const wasAbove = before.userOps.filter((o) => o.blockNumber > ancestor).map((o) => o.userOpHash);
        expect([...result.removedUserOpHashes, ...result.movedUserOpHashes].sort()).to.deep.equal([...wasAbove].sort());
        const events = new Map(view.entryPointLogs.filter((l) => l.topics[0] === TOPICS.userOperationEvent).map((l) => [l.topics[1]!, l]));
        for (const h of result.removedUserOpHashes) expect(events.has(h), `removed ${h}`).to.equal(false);
        for (const h of result.movedUserOpHashes) {
          const oldTx = before.userOps.find((o) => o.userOpHash === h)!.transactionHash;
          expect(events.get(h)?.transactionHash, `moved ${h}`).to.be.a('string').and.not.equal(oldTx);
        }
        for (const h of result.newUserOpHashes) expect(events.get(h)!.blockNumber).to.be.greaterThan(ancestor);
        if (wasAbove.length > 1) expect(result.removedUserOpHashes, 'some ops disappear').to.have.length.greaterThan(0);
        expect(result.newUserOpHashes, 'new ops').to.have.length.greaterThan(0);

        expect((await allProblems(view, devnet.truth)).slice(0, 20)).to.deep.equal([]);
      });
    }
  });

  it('continuous mode keeps appending to the truth', async () => {
    const start = devnet.truth.userOps.length;
    const traffic = startContinuous(devnet, { intervalMs: 50, opsPerTick: 4, seed: 5, onError: (e) => expect.fail(String(e)) });
    const deadline = Date.now() + 30_000;
    while (devnet.truth.userOps.length < start + 12 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await traffic.stop();
    expect(devnet.truth.userOps.length).to.be.at.least(start + 12);
    expect((await allProblems(await readChain(devnet.rpcUrl, devnet.truth), devnet.truth)).slice(0, 20)).to.deep.equal([]);
  });

  // npm start replays the vendors' recipe and then generates history with the deployer's signer.
  it("replays the vendors' recipe without spending a nonce of the devnet's signers, so generation goes on", async () => {
    const signers = [devnet.deployer, ...devnet.bundlers].map((s) => s.address);
    const counts = () => devnet.rpc.batch<string>(signers.map((a) => ['eth_getTransactionCount', [a, 'latest']]));
    const before = await counts();
    await devnet.exclusive(() => deployVendorContracts(devnet.rpc));
    expect(await counts()).to.deep.equal(before);
    const start = devnet.truth.userOps.length;
    await generate(devnet, { ops: 20, days: 1, seed: 7 });
    expect(devnet.truth.userOps.length).to.equal(start + 20);
  });
});
