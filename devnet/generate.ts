/**
 * One-shot traffic: plans `ops` user operations over blocks spread across `days` UTC days, creates
 * and funds the new accounts they need, then signs, sends and mines block after block, recording
 * the ground truth as it goes. Fast path: all signing is local, a block's transactions go out in
 * one batch, nothing waits for a receipt except the explicit mine.
 */
import { prepareNewAccounts } from './accounts.js';
import { deployAll, type Devnet } from './devnet.js';
import { headBlock, withManualMining } from './mining.js';
import type { OpContext } from './ops.js';
import { DEFAULT_LAYOUT, planBlocks, type LayoutOptions } from './plan.js';
import { Random } from './random.js';
import { mineSignedBlock, signBlock } from './submit.js';
import { computeDays, type GroundTruth } from './truth.js';

export type GenerateOptions = {
  ops: number;
  /** UTC days the blocks spread over, starting with the head block's day (default 3). */
  days?: number;
  /** Same seed, same plan (default 1). */
  seed?: number;
  layout?: Partial<LayoutOptions>;
  /** Called after each mined block with the number of ops mined so far. */
  onProgress?: (opsDone: number) => void;
};

const DAY = 86400;

/** Generates the ops and returns devnet.truth: everything recorded on this devnet so far. */
export async function generate(devnet: Devnet, opts: GenerateOptions): Promise<GroundTruth> {
  const deployment = await deployAll(devnet);
  return devnet.exclusive(() =>
    withManualMining(devnet.rpc, async () => {
      const rng = new Random(opts.seed ?? 1);
      const ctx: OpContext = { devnet, deployment, rng, recipients: devnet.recipients };
      const plans = planBlocks(ctx, opts.ops, { ...DEFAULT_LAYOUT, ...opts.layout });

      const head = await headBlock(devnet.rpc);
      const times = spreadTimestamps(head.timestamp, plans.length + 1, opts.days ?? 3);
      await prepareNewAccounts(devnet, deployment, times[0]!);
      ctx.recipients = [...devnet.recipients, ...sampleAccounts(devnet, rng, 6)];

      let done = 0;
      for (const [i, plan] of plans.entries()) {
        const txs = signBlock(ctx, plan);
        await mineSignedBlock(devnet, deployment, txs, times[i + 1]!);
        done += txs.reduce((n, tx) => n + tx.bundles.reduce((m, b) => m + b.ops.length, 0), 0);
        opts.onProgress?.(done);
      }
      devnet.truth.days = computeDays(devnet.truth);
      return devnet.truth;
    }),
  );
}

/** A few smart-account addresses to receive transfers too (not only EOAs). */
function sampleAccounts(devnet: Devnet, rng: Random, count: number): string[] {
  const resolved = devnet.traffic.accounts.filter((a) => a.address);
  return Array.from({ length: Math.min(count, resolved.length) }, () => rng.pick(resolved).address);
}

/**
 * `count` strictly increasing timestamps after `after`, spread evenly to the end of the
 * `days`-th UTC day counted from the day of `after` (so each of those days gets blocks).
 */
export function spreadTimestamps(after: number, count: number, days: number): number[] {
  const start = after + 1;
  const end = Math.max((Math.floor(after / DAY) + days) * DAY - 1, start + count);
  const step = count > 1 ? (end - start) / (count - 1) : 0;
  return Array.from({ length: count }, (_, i) => start + Math.floor(i * step));
}
