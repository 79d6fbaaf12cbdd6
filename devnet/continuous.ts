/**
 * Slow continuous traffic for the demo: every `intervalMs`, one block with `opsPerTick` new ops at
 * wall-clock time (or just after the head, if generated history ran ahead of the clock), appended
 * to devnet.truth like everything else.
 */
import { prepareNewAccounts } from './accounts.js';
import { deployAll, type Devnet } from './devnet.js';
import { headBlock, withManualMining, type MinedBlock } from './mining.js';
import type { OpContext } from './ops.js';
import { DEFAULT_LAYOUT, planBlocks } from './plan.js';
import { Random } from './random.js';
import { mineSignedBlock, signBlock } from './submit.js';
import { computeDays } from './truth.js';
import { startTicker, type Ticker } from './ticker.js';

export type ContinuousOptions = {
  /** Time between blocks (default 2000 ms). */
  intervalMs?: number;
  /** Ops per block (default 4). */
  opsPerTick?: number;
  seed?: number;
  /** A failed tick is reported here and the loop goes on (default: written to stderr). */
  onError?: (err: unknown) => void;
  /** After each mined tick, with the total ops recorded so far. */
  onTick?: (totalOps: number) => void;
};

export type ContinuousTraffic = Ticker;

/**
 * One block of up to `opsPerBlock` new ops (fewer when the first planned block holds fewer), mined at
 * wall-clock time or just after the head, appended to devnet.truth; null when nothing was planned.
 * New accounts it needs are funded in a block of their own first.
 */
export async function mineTrafficBlock(devnet: Devnet, rng: Random, opsPerBlock: number): Promise<MinedBlock | null> {
  const deployment = await deployAll(devnet);
  return devnet.exclusive(() =>
    withManualMining(devnet.rpc, async () => {
      const ctx: OpContext = { devnet, deployment, rng, recipients: devnet.recipients };
      // One block per call: ops beyond what the first planned block holds wait for later calls.
      const [plan] = planBlocks(ctx, opsPerBlock, {
        ...DEFAULT_LAYOUT,
        maxBundlesPerBlock: 3,
        maxOpsPerBundle: Math.max(2, opsPerBlock),
        newAccountRate: 0.1,
      });
      let time = Math.max((await headBlock(devnet.rpc)).timestamp + 1, Math.floor(Date.now() / 1000));
      if (await prepareNewAccounts(devnet, deployment, time)) time++;
      const block = plan ? await mineSignedBlock(devnet, deployment, signBlock(ctx, plan), time) : null;
      devnet.truth.days = computeDays(devnet.truth);
      return block;
    }),
  );
}

export function startContinuous(devnet: Devnet, opts: ContinuousOptions = {}): ContinuousTraffic {
  const intervalMs = opts.intervalMs ?? 2000;
  const opsPerTick = opts.opsPerTick ?? 4;
  const rng = new Random(opts.seed ?? Date.now());
  const onError = opts.onError ?? ((err: unknown) => process.stderr.write(`devnet continuous traffic: ${String(err)}\n`));
  const tick = async (): Promise<void> => {
    await mineTrafficBlock(devnet, rng, opsPerTick);
    opts.onTick?.(devnet.truth.userOps.length);
  };
  return startTicker(tick, { intervalMs, onError });
}
