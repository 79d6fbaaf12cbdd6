/**
 * Simulated reorg: anvil_rollback drops the last `depth` blocks, then new blocks replace them with
 * different content: part of the dropped ops come back in a new block and transaction ("moved",
 * same userOpHash), the rest never return ("removed"), and each further block carries new ops. By
 * default the new chain is one block longer than the old one, so a follower sees a longer fork with
 * different hashes at every height above the common ancestor; `length` below `depth` makes it shorter
 * (the head moves back). devnet.truth is rewritten to match.
 */
import { Interface } from 'ethers';
import { fundAccounts, prepareNewAccounts, type SmartAccount } from './accounts.js';
import { deployAll, type Devnet } from './devnet.js';
import { headBlock, withManualMining } from './mining.js';
import type { OpContext, SignedOp } from './ops.js';
import { DEFAULT_LAYOUT, planBlocks } from './plan.js';
import { Random } from './random.js';
import type { SignedTx } from './receipts.js';
import { mineSignedBlock, signBlock } from './submit.js';
import { computeDays, truncateTruth } from './truth.js';
import { EP_VERSIONS } from './userop.js';

export type ReorgOptions = {
  /** Up to this many new ops in each block after the re-included ones (default 3). */
  opsPerBlock?: number;
  seed?: number;
  /**
   * At least this many blocks replace the dropped ones (default depth + 1); more when the ops that
   * come back need more blocks.
   */
  length?: number;
};

export type BlockRef = { number: number; hash: string };

export type ReorgResult = {
  depth: number;
  commonAncestor: BlockRef;
  /** The blocks that were dropped (heights ancestor+1 .. old head). */
  oldBlocks: BlockRef[];
  /** The blocks that replaced them (heights ancestor+1 .. old head+1 or more). */
  newBlocks: BlockRef[];
  /** Ops that were on chain and are not any more. */
  removedUserOpHashes: string[];
  /** Ops that were dropped and came back in a new block (same hash, new tx and block). */
  movedUserOpHashes: string[];
  /** Ops that did not exist before the reorg. */
  newUserOpHashes: string[];
};

const MAX_DEPTH = 100;
const entryPointNonces = new Interface(['function getNonce(address sender, uint192 key) view returns (uint256)']);

export async function reorg(devnet: Devnet, depth: number, opts: ReorgOptions = {}): Promise<ReorgResult> {
  if (!Number.isInteger(depth) || depth < 1 || depth > MAX_DEPTH) throw new Error(`reorg depth must be 1..${MAX_DEPTH}`);
  const d = await deployAll(devnet);
  return devnet.exclusive(() =>
    withManualMining(devnet.rpc, async () => {
      const { rpc, truth } = devnet;
      const head = await headBlock(rpc);
      const ancestorNumber = head.number - depth;
      if (ancestorNumber < 1) throw new Error(`chain too short for a reorg of depth ${depth}`);
      const heights = Array.from({ length: depth + 1 }, (_, i) => ancestorNumber + i);
      const blocks = await rpc.batch<{ hash: string; timestamp: string }>(
        heights.map((n) => ['eth_getBlockByNumber', [`0x${n.toString(16)}`, false]]),
      );
      const ancestor = { number: ancestorNumber, hash: blocks[0]!.hash, timestamp: Number(blocks[0]!.timestamp) };
      const oldBlocks = heights.slice(1).map((number, i) => ({ number, hash: blocks[i + 1]!.hash }));

      const removed = truth.userOps
        .filter((o) => o.blockNumber > ancestorNumber)
        .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex)
        .map((o) => devnet.traffic.submitted.get(o.userOpHash)!);
      await rpc.call('anvil_rollback', [depth]);
      if ((await headBlock(rpc)).hash !== ancestor.hash) throw new Error('anvil_rollback did not land on the common ancestor');
      truncateTruth(truth, ancestorNumber);
      await Promise.all([devnet.deployer, ...devnet.bundlers].map((s) => s.syncNonce(rpc)));

      const rng = new Random(opts.seed ?? head.number);
      const ctx: OpContext = { devnet, deployment: d, rng, recipients: devnet.recipients };
      const newBlocks: BlockRef[] = [];
      // A timestamp different from the old block's at the same height guarantees a different hash.
      const oldTimes = blocks.slice(1).map((b) => Number(b.timestamp));
      let time = ancestor.timestamp;
      const nextTime = (): number => {
        time += rng.int(1, 12);
        if (time === oldTimes[newBlocks.length]) time++;
        return time;
      };

      // Funding done above the ancestor (ETH by state edit, ERC-20 by tx) is gone: redo it first.
      const unfunded = devnet.traffic.accounts.filter((a) => a.fundedAtBlock > ancestorNumber);
      if (unfunded.length > 0) newBlocks.push(await fundAccounts(devnet, d, unfunded, nextTime()));

      const moved = chooseMoved(removed);
      for (const txs of rebundle(devnet, rng, moved)) newBlocks.push(await mineSignedBlock(devnet, d, txs, nextTime()));
      await syncAccounts(devnet, [...new Set(removed.map((o) => o.account))]);

      // New ops in every remaining block, and in at least one: the fork always brings something new.
      const layout = { ...DEFAULT_LAYOUT, maxBundlesPerBlock: 1, maxOpsPerBundle: opts.opsPerBlock ?? 3, newAccountRate: 0 };
      let newOpBlocks = 0;
      while (newBlocks.length < (opts.length ?? depth + 1) || newOpBlocks === 0) {
        const plan = planBlocks(ctx, layout.maxOpsPerBundle, layout)[0]!;
        const funding = await prepareNewAccounts(devnet, d, nextTime());
        if (funding) newBlocks.push(funding);
        newBlocks.push(await mineSignedBlock(devnet, d, signBlock(ctx, plan), nextTime()));
        newOpBlocks++;
      }
      truth.days = computeDays(truth);

      const movedHashes = new Set(moved.map((o) => o.hash));
      const removedHashes = new Set(removed.map((o) => o.hash));
      return {
        depth,
        commonAncestor: { number: ancestor.number, hash: ancestor.hash },
        oldBlocks,
        newBlocks: newBlocks.map((b) => ({ number: b.number, hash: b.hash })),
        removedUserOpHashes: removed.filter((o) => !movedHashes.has(o.hash)).map((o) => o.hash),
        movedUserOpHashes: [...movedHashes],
        newUserOpHashes: truth.userOps
          .filter((o) => o.blockNumber > ancestorNumber && !removedHashes.has(o.userOpHash))
          .map((o) => o.userOpHash),
      };
    }),
  );
}

/**
 * Keeps a prefix of each sender's dropped ops (their nonces stay consecutive and a deployment
 * stays ahead of later ops): every other sender loses its last op, so some ops move, some vanish.
 */
function chooseMoved(removed: SignedOp[]): SignedOp[] {
  const bySender = new Map<string, SignedOp[]>();
  for (const o of removed) bySender.set(o.op.sender, [...(bySender.get(o.op.sender) ?? []), o]);
  const dropped = new Set<string>();
  [...bySender.values()].forEach((ops, i) => {
    if (i % 2 === 0) dropped.add(ops[ops.length - 1]!.hash);
  });
  return removed.filter((o) => !dropped.has(o.hash));
}

const MAX_MOVED_PER_BUNDLE = 24;

/**
 * Blocks of re-included ops, in their original order: per block one bundle per EntryPoint version
 * (so each account's ops of a block share a bundle), each from a bundler picked afresh and of at
 * most MAX_MOVED_PER_BUNDLE ops; a full bundle starts the next block.
 */
function rebundle(devnet: Devnet, rng: Random, ops: SignedOp[]): SignedTx[][] {
  const blocks: Array<Map<string, SignedOp[]>> = [];
  let current = new Map<string, SignedOp[]>();
  for (const op of ops) {
    const bundle = current.get(op.version) ?? [];
    if (bundle.length === MAX_MOVED_PER_BUNDLE) {
      blocks.push(current);
      current = new Map();
    }
    current.set(op.version, [...(current.get(op.version) ?? []), op]);
  }
  if (current.size > 0) blocks.push(current);
  return blocks.map((byVersion) =>
    EP_VERSIONS.filter((v) => byVersion.has(v)).map((v) => {
      const group = byVersion.get(v)!;
      const bundler = rng.pick(devnet.bundlers);
      return {
        bundler,
        bundles: [{ bundleIndex: 0, version: v, entryPoint: group[0]!.entryPoint, beneficiary: bundler.address, ops: group }],
      };
    }),
  );
}

/** Re-reads deployment and nonces of accounts whose ops were dropped, from the chain. */
async function syncAccounts(devnet: Devnet, accounts: SmartAccount[]): Promise<void> {
  const queries = accounts.flatMap((a) => [...a.nonces.keys()].map((key) => ({ a, key })));
  const [codes, nonces] = await Promise.all([
    devnet.rpc.batch<string>(accounts.map((a) => ['eth_getCode', [a.address, 'latest']])),
    devnet.rpc.batch<string>(
      queries.map(({ a, key }) => [
        'eth_call',
        [{ to: a.entryPoint, data: entryPointNonces.encodeFunctionData('getNonce', [a.address, key]) }, 'latest'],
      ]),
    ),
  ]);
  accounts.forEach((a, i) => (a.deployPlanned = codes[i] !== '0x'));
  queries.forEach(({ a, key }, i) => a.nonces.set(key, BigInt(nonces[i]!) & ((1n << 64n) - 1n)));
}
