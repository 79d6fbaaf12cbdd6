/**
 * Acts as the bundlers: signs the planned ops, wraps them into handleOps transactions (two bundles
 * in one transaction go through BundleMulticall), sends a block's transactions in one batch, mines
 * the block at its timestamp and records the outcome.
 */
import { Interface } from 'ethers';
import type { Deployment } from './deploy.js';
import type { Devnet } from './devnet.js';
import { mineBlock, sendRawTransactions, type MinedBlock } from './mining.js';
import { bundleGasLimit, signNextOp, type OpContext } from './ops.js';
import type { BlockPlan } from './plan.js';
import { recordBlock, type SignedTx } from './receipts.js';
import { encodeHandleOps } from './userop.js';

const multicall = new Interface([
  'function aggregate((address target, bytes data)[] calls)',
  'function aggregateMasked((address target, bytes data)[] calls, bytes1 mask)',
]);
/** XOR-ed into every byte of a masked multicall's calls (BundleMulticall.aggregateMasked). */
const MASK = 0x5a;

/**
 * Whether a transaction hides its bundles' calldata from its input (about half of the two-bundle
 * ones, chosen by their first op's hash): those need a trace to be decoded, the others can be read
 * inside the input.
 */
export function hidesCalldata(tx: SignedTx): boolean {
  const first = tx.bundles[0]?.ops[0];
  return tx.bundles.length > 1 && !!first && Number.parseInt(first.hash.slice(-1), 16) % 2 === 1;
}

const masked = (data: string): string => `0x${Buffer.from(Buffer.from(data.slice(2), 'hex').map((b) => b ^ MASK)).toString('hex')}`;
/** Gas of aggregateMasked's unmasking loop, per byte of calldata (generous). */
const UNMASK_GAS_PER_BYTE = 150n;
const entryPointErrors = new Interface([
  'error FailedOp(uint256 opIndex, string reason)',
  'error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)',
]);

/** Why a bundle transaction reverted (the EntryPoint's FailedOp names the op and the AAxx code). */
async function explainRevert(devnet: Devnet, txHash: string): Promise<string> {
  const trace = await devnet.rpc
    .call<{ output?: string; error?: string }>('debug_traceTransaction', [txHash, { tracer: 'callTracer' }])
    .catch(() => null);
  let reason = trace?.error ?? 'unknown';
  try {
    const parsed = trace?.output ? entryPointErrors.parseError(trace.output) : null;
    if (parsed) reason = `${parsed.name}(${parsed.args.map(String).join(', ')})`;
  } catch {
    reason += ` ${trace?.output}`;
  }
  return `bundle tx ${txHash} reverted: ${reason} (the devnet built an invalid op)`;
}

/** Signs every op of a planned block, in plan order (which is each account's nonce order). */
export function signBlock(ctx: OpContext, plan: BlockPlan): SignedTx[] {
  return plan.txs.map((tx) => ({
    bundler: tx.bundler,
    bundles: tx.bundles.map((b, bundleIndex) => ({
      bundleIndex,
      version: b.version,
      entryPoint: ctx.deployment.entryPoints[b.version],
      beneficiary: b.beneficiary,
      ops: b.accounts.map((account) => signNextOp(ctx, account)),
    })),
  }));
}

async function rawTransaction(d: Deployment, tx: SignedTx): Promise<string> {
  const gasLimit = tx.bundles.reduce((sum, b) => sum + bundleGasLimit(b.ops), 0n);
  const calls = tx.bundles.map((b) => ({
    target: b.entryPoint,
    data: encodeHandleOps(
      b.version,
      b.ops.map((o) => o.op),
      b.beneficiary,
    ),
  }));
  const [only] = calls;
  if (calls.length === 1 && only) return tx.bundler.sign({ to: only.target, data: only.data, gasLimit });
  const hidden = hidesCalldata(tx);
  const data = hidden
    ? multicall.encodeFunctionData('aggregateMasked', [calls.map((c) => ({ ...c, data: masked(c.data) })), `0x${MASK.toString(16)}`])
    : multicall.encodeFunctionData('aggregate', [calls]);
  const unmasking = hidden ? UNMASK_GAS_PER_BYTE * BigInt(calls.reduce((n, c) => n + (c.data.length - 2) / 2, 0)) : 0n;
  return tx.bundler.sign({ to: d.bundleMulticall, data, gasLimit: gasLimit + 50_000n + unmasking });
}

export function tokenAddresses(d: Deployment): Set<string> {
  return new Set([d.erc20Usd6, d.erc20Dai18, d.erc721, d.erc1155]);
}

/**
 * Sends, mines at `timestamp` (automine must be off) and appends the block to devnet.truth, with the
 * ops' transfers of `tokens` (the deployment's own by default).
 */
export async function mineSignedBlock(
  devnet: Devnet,
  d: Deployment,
  txs: SignedTx[],
  timestamp: number,
  tokens = tokenAddresses(d),
): Promise<MinedBlock> {
  const raws = await Promise.all(txs.map((tx) => rawTransaction(d, tx)));
  const hashes = await sendRawTransactions(devnet.rpc, raws);
  const block = await mineBlock(devnet.rpc, timestamp, hashes);
  for (const r of block.receipts) if (r.status !== '0x1') throw new Error(await explainRevert(devnet, r.transactionHash));
  for (const [i, tx] of txs.entries()) if (hidesCalldata(tx)) devnet.truth.calldataOnlyInTraces.push(hashes[i]!);
  recordBlock(
    devnet.truth,
    block,
    txs.map((tx, i) => ({ ...tx, hash: hashes[i]! })),
    tokens,
  );
  return block;
}
