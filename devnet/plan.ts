/**
 * Lays traffic out over blocks: how many bundles per block, which EntryPoint each bundle targets,
 * how many ops it holds and whose they are, which transactions carry two bundles, who bundles and
 * who is paid.
 *
 * One rule keeps every bundle valid whatever order the node puts a block's transactions in: an
 * account's ops within a block all sit in one bundle (in nonce order), so no bundle depends on
 * another bundle of the same block (deployment or nonce sequence).
 */
import { newAccount, type SmartAccount } from './accounts.js';
import type { Deployment } from './deploy.js';
import type { Devnet } from './devnet.js';
import type { Random } from './random.js';
import type { LocalSigner } from './signer.js';
import { EP_VERSIONS, type EpVersion } from './userop.js';

export type BundlePlan = { version: EpVersion; beneficiary: string; accounts: SmartAccount[] };
/** More than one bundle → sent through BundleMulticall. */
export type TxPlan = { bundler: LocalSigner; bundles: BundlePlan[] };
export type BlockPlan = { txs: TxPlan[] };

export type LayoutOptions = {
  /** Bundles hold 1..maxOpsPerBundle ops (a quarter of them exactly one). */
  maxOpsPerBundle: number;
  maxBundlesPerBlock: number;
  /** Chance that an op starts a brand-new account (its first op deploys it through initCode). */
  newAccountRate: number;
  /** Chance that two adjacent bundles of a block share one transaction. */
  multiBundleTxRate: number;
  /** Chance that a bundle pays its fees to the bundler itself rather than another beneficiary. */
  selfBeneficiaryRate: number;
};

export const DEFAULT_LAYOUT: LayoutOptions = {
  maxOpsPerBundle: 16,
  maxBundlesPerBlock: 4,
  newAccountRate: 0.12,
  multiBundleTxRate: 0.08,
  selfBeneficiaryRate: 0.5,
};

export type PlanContext = { devnet: Devnet; deployment: Deployment; rng: Random };

export function planBlocks(ctx: PlanContext, ops: number, layout: LayoutOptions = DEFAULT_LAYOUT): BlockPlan[] {
  const { rng } = ctx;
  const blocks: BlockPlan[] = [];
  let remaining = ops;
  while (remaining > 0) {
    const usedBy = new Map<number, BundlePlan>();
    const bundles: Array<{ plan: BundlePlan; paysBundler: boolean }> = [];
    const bundleCount = rng.int(1, layout.maxBundlesPerBlock);
    for (let b = 0; b < bundleCount && remaining > 0; b++) {
      const size = Math.min(remaining, rng.chance(0.25) ? 1 : rng.int(2, Math.max(2, layout.maxOpsPerBundle)));
      const plan: BundlePlan = { version: rng.pick(EP_VERSIONS), beneficiary: '', accounts: [] };
      for (let i = 0; i < size; i++) plan.accounts.push(chooseAccount(ctx, layout, plan, usedBy));
      bundles.push({ plan, paysBundler: rng.chance(layout.selfBeneficiaryRate) });
      remaining -= size;
    }
    const txs: TxPlan[] = [];
    for (let i = 0; i < bundles.length; i++) {
      const tx: TxPlan = { bundler: rng.pick(ctx.devnet.bundlers), bundles: [] };
      const take = i + 1 < bundles.length && rng.chance(layout.multiBundleTxRate) ? [bundles[i]!, bundles[++i]!] : [bundles[i]!];
      for (const { plan, paysBundler } of take) {
        plan.beneficiary = paysBundler ? tx.bundler.address : rng.pick(ctx.devnet.beneficiaries);
        tx.bundles.push(plan);
      }
      txs.push(tx);
    }
    blocks.push({ txs });
  }
  return blocks;
}

function chooseAccount(ctx: PlanContext, layout: LayoutOptions, bundle: BundlePlan, usedBy: Map<number, BundlePlan>): SmartAccount {
  const { devnet, deployment, rng } = ctx;
  const free = (a: SmartAccount): boolean => a.version === bundle.version && (usedBy.get(a.id) ?? bundle) === bundle;
  let account: SmartAccount | undefined;
  if (!rng.chance(layout.newAccountRate)) {
    const candidates = devnet.traffic.accounts.filter(free);
    if (candidates.length > 0) {
      account = rng.pick(candidates);
      // Several ops of one sender in a bundle happen, but should stay the exception.
      if (bundle.accounts.includes(account) && rng.chance(0.7)) account = rng.pick(candidates);
    }
  }
  account ??= newAccount(devnet, deployment, bundle.version, rng.chance(0.35) ? 'mini' : 'simple');
  usedBy.set(account.id, bundle);
  return account;
}
