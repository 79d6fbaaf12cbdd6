/**
 * The cheap half of a block: what each transaction is (its kind, how many logs and how much gas),
 * and for bundles every op's sender, nonce, calls and outcome, drawn from PRNGs seeded by
 * (seed, block) and (seed, block, transaction), without encoding or hashing anything. Log indexes,
 * gas totals and which slots an eth_getLogs must look at follow from it; materialize.ts turns a
 * slot into the transaction, receipt and logs.
 *
 * Senders and nonces without replaying history: block n offers `opSlots` op slots; slot g = n·S + j
 * of the whole chain belongs to round r = ⌊g / A⌋ (A established accounts) and goes to account
 * π_r(g mod A), an affine bijection of [0, A) drawn per round. Each account thus sends at most one op
 * per round, and its op of round r has nonce sequence r: increasing across blocks (with gaps where a
 * slot went unused), computable for any block. Accounts deployed in block n (deploysPerBlock) are
 * numbered A + ⌊n·rate⌋ + i; their op carries initCode and nonce sequence 0.
 */
import type { Random } from '../devnet/random.js';
import type { EpVersion } from '../devnet/userop.js';
import { FAMILIES, type Family } from './accounts.js';
import { mix, rng } from './ids.js';
import type { Profile } from './profiles.js';

export type FillerKind = 'plain' | 'erc20' | 'swap' | 'nft' | 'multi' | 'other' | 'spam';
export type CallKind = 'erc20' | 'nft' | 'multi' | 'native' | 'dapp';

/** A party of a transfer: an EOA holder or a smart account (which opscan may know). */
export type Party = { holder: number } | { account: number };

export type CallPlan = { kind: CallKind; contract: number; to: Party; amount: bigint; tokenId: bigint };

export type OpPlan = {
  account: number;
  family: Family;
  nonce: bigint;
  deploy: boolean;
  paymaster: number | null;
  success: boolean;
  calls: CallPlan[];
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  actualGasUsed: bigint;
  /** Seeds the op's opaque bytes (signature, paymaster data). */
  salt: number;
};

export type BundlePlan = { version: EpVersion; bundler: number; ops: OpPlan[] };

export type Slot = {
  kind: FillerKind | 'bundle';
  logCount: number;
  /** Block-level index of the slot's first log. */
  logOffset: number;
  gasUsed: bigint;
  cumulativeGasUsed: bigint;
  /** Priority fee per gas the transaction pays. */
  tip: bigint;
  bundle: BundlePlan | null;
};

export type Skeleton = { number: number; timestamp: number; baseFee: bigint; slots: Slot[]; logCount: number; gasUsed: bigint };

/** Logs of each call kind the account's execution emits (a native transfer emits none). */
const CALL_LOGS: Record<CallKind, number> = { erc20: 1, nft: 1, multi: 1, native: 0, dapp: 1 };

/** Logs of one op: AccountDeployed, then its execution's logs or UserOperationRevertReason, then UserOperationEvent. */
export const opLogCount = (op: OpPlan): number =>
  (op.deploy ? 1 : 0) + (op.success ? op.calls.reduce((s, c) => s + CALL_LOGS[c.kind], 0) : 1) + 1;

/** Token-moving filler kinds within tokenTxShare, the rest split between plain transfers and other contracts. */
const TOKEN_KINDS: Record<'erc20' | 'swap' | 'nft' | 'multi', number> = { erc20: 0.55, swap: 0.3, nft: 0.1, multi: 0.05 };
const TOKEN_LOGS = { erc20: 1, swap: 4, nft: 1, multi: 1 };
const PLAIN_SHARE = 0.45;

export function poisson(r: Random, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * (r.next() + r.next() + r.next() - 1.5) * 2));
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = r.next(); p > limit; p *= r.next()) k++;
  return k;
}

export class ChainPlan {
  readonly opSlots: number;
  /** Mean logs of an "other contracts'" transaction, so that a block reaches the profile's logsPerBlock. */
  readonly otherLogs: number;
  readonly genesisTime: number;

  constructor(
    readonly profile: Profile,
    readonly seed: number,
    readonly accounts: number,
  ) {
    const p = profile;
    this.opSlots = Math.ceil(p.bundlesPerBlock * p.opsPerBundle * 3) + 4;
    const bundleLogs = p.bundlesPerBlock * (1 + p.opsPerBundle * 2.4);
    const filler = Math.max(1, p.txPerBlock - p.bundlesPerBlock);
    const tokenLogs = Object.entries(TOKEN_KINDS).reduce((s, [k, w]) => s + w * TOKEN_LOGS[k as keyof typeof TOKEN_LOGS], 0);
    const others = filler * (1 - p.tokenTxShare) * (1 - PLAIN_SHARE);
    this.otherLogs = Math.max(1, (p.logsPerBlock - bundleLogs - filler * p.tokenTxShare * tokenLogs) / Math.max(others, 1e-9));
    // Block `defaultFromBlock` falls on 2025-01-01 00:00 UTC.
    this.genesisTime = 1_735_689_600 - Math.floor((p.defaultFromBlock * p.blockTimeMs) / 1000);
  }

  timestamp(n: number): number {
    return this.genesisTime + Math.floor((n * this.profile.blockTimeMs) / 1000);
  }

  /** The family (and so the EntryPoint version) of account `id`: fixed for its life. */
  familyOf(id: number): Family {
    const r = rng(this.seed, 0xfa, id);
    const list = FAMILIES[r.weighted(this.profile.entryPoints)];
    let x = r.next() * list.reduce((s, [, w]) => s + w, 0);
    for (const [family, w] of list) if ((x -= w) < 0) return family;
    return list[list.length - 1]![0];
  }

  /** Account of global op slot g and its nonce sequence (see the file comment). */
  private slotSender(g: number): { account: number; sequence: number } {
    const A = this.accounts;
    const round = Math.floor(g / A);
    const r = rng(this.seed, 0x9e, round);
    const bigA = BigInt(A);
    let a = BigInt(r.int(1, 0x7fffffff)) % bigA || 1n;
    while (gcd(a, bigA) !== 1n) a = (a + 1n) % bigA || 1n;
    const b = BigInt(r.int(0, 0x7fffffff)) % bigA;
    return { account: Number((a * BigInt(g % A) + b) % bigA), sequence: round };
  }

  /** Accounts deployed before block n. */
  private deployedBefore(n: number): number {
    return Math.floor(n * this.profile.deploysPerBlock);
  }

  skeleton(n: number): Skeleton {
    const p = this.profile;
    const r = rng(this.seed, 0xb1, n);
    const baseFee = (p.baseFeeWei * BigInt(80 + r.int(0, 40))) / 100n;
    const bundles = this.bundles(n, r, baseFee);
    const spam = p.spamEvery > 0 && n % p.spamEvery === 0 ? 2 : 0;
    const count = Math.max(bundles.length + spam, Math.round(p.txPerBlock * (0.8 + 0.4 * r.next())));
    const special: Array<BundlePlan | 'spam'> = [...bundles, ...Array.from({ length: spam }, () => 'spam' as const)];
    const at = new Map<number, BundlePlan | 'spam'>();
    for (const s of special) {
      let i = r.int(0, count - 1);
      while (at.has(i)) i = (i + 1) % count;
      at.set(i, s);
    }
    const slots: Slot[] = [];
    let logOffset = 0;
    let gas = 0n;
    for (let i = 0; i < count; i++) {
      const s = at.get(i);
      let slot: Omit<Slot, 'logOffset' | 'cumulativeGasUsed'>;
      if (s && s !== 'spam') {
        const logCount = 1 + s.ops.reduce((sum, op) => sum + opLogCount(op), 0);
        const opGas = s.ops.reduce((sum, op) => sum + op.actualGasUsed, 0n);
        slot = { kind: 'bundle', logCount, gasUsed: (opGas * 9n) / 10n + 30_000n, tip: 1_000_000n, bundle: s };
      } else {
        const shape = this.fillerShape(n, i, s === 'spam');
        slot = { kind: shape.kind, logCount: shape.logCount, gasUsed: shape.gasUsed, tip: shape.tip, bundle: null };
      }
      gas += slot.gasUsed;
      slots.push({ ...slot, logOffset, cumulativeGasUsed: gas });
      logOffset += slot.logCount;
    }
    return { number: n, timestamp: this.timestamp(n), baseFee, slots, logCount: logOffset, gasUsed: gas };
  }

  /** The block's ops grouped into bundles, one EntryPoint version per bundle. */
  private bundles(n: number, r: Random, baseFee: bigint): BundlePlan[] {
    const p = this.profile;
    const slotOps = Math.min(this.opSlots, poisson(r, p.bundlesPerBlock * p.opsPerBundle));
    const ops: OpPlan[] = [];
    for (let j = 0; j < slotOps; j++) {
      const { account, sequence } = this.slotSender(n * this.opSlots + j);
      ops.push(this.opPlan(account, BigInt(sequence), false, rng(this.seed, 0x0b, n, j), baseFee));
    }
    const firstNew = this.accounts + this.deployedBefore(n);
    for (let id = firstNew; id < this.accounts + this.deployedBefore(n + 1); id++) {
      ops.push(this.opPlan(id, 0n, true, rng(this.seed, 0xde, id), baseFee));
    }
    const out: BundlePlan[] = [];
    for (const version of ['v0.6', 'v0.7', 'v0.8'] as const) {
      const mine = ops.filter((o) => o.family.version === version);
      while (mine.length > 0) {
        const size = Math.min(mine.length, 1 + poisson(r, p.opsPerBundle - 1));
        out.push({ version, bundler: r.int(0, p.bundlers - 1), ops: mine.splice(0, size) });
      }
    }
    return out;
  }

  private opPlan(account: number, sequence: bigint, deploy: boolean, r: Random, baseFee: bigint): OpPlan {
    const p = this.profile;
    const family = this.familyOf(account);
    const key = family.keyed ? BigInt(mix(this.seed, 0x4e, account)) << 32n : 0n;
    const count = family.batches && r.chance(0.25) ? r.int(2, 3) : 1;
    const calls: CallPlan[] = [];
    for (let i = 0; i < count; i++) {
      let kind: CallKind = r.weighted({ erc20: 0.5, native: 0.15, dapp: 0.2, nft: 0.1, multi: 0.05 });
      if (kind === 'native' && count > 1 && !family.batchValues) kind = 'erc20';
      calls.push({
        kind,
        contract: r.int(0, kind === 'erc20' ? p.tokens - 1 : 15),
        to: this.party(r),
        amount: BigInt(r.int(1, 2_000_000_000)) * 1_000_000_000n,
        tokenId: BigInt(r.int(1, 5_000_000)),
      });
    }
    const tip = BigInt(r.int(1, 20)) * (p.baseFeeWei / 20n + 1n);
    const callGasLimit = BigInt(r.int(40_000, 400_000));
    const verificationGasLimit = BigInt(deploy ? r.int(300_000, 600_000) : r.int(60_000, 200_000));
    const preVerificationGas = BigInt(r.int(45_000, 90_000));
    const paymaster = r.chance(p.paymasterShare) ? r.int(0, p.paymasters - 1) : null;
    const success = !r.chance(p.failedOpShare);
    const limit = callGasLimit + verificationGasLimit + preVerificationGas;
    return {
      account,
      family,
      nonce: (key << 64n) | sequence,
      deploy,
      paymaster,
      success,
      calls,
      callGasLimit,
      verificationGasLimit,
      preVerificationGas,
      maxFeePerGas: baseFee * 2n + tip,
      maxPriorityFeePerGas: tip,
      actualGasUsed: (limit * BigInt(r.int(45, 90))) / 100n,
      salt: r.int(0, 0x7fffffff),
    };
  }

  /** A transfer's counterparty: mostly EOA holders, sometimes an established smart account. */
  party(r: Random): Party {
    return r.chance(0.08) ? { account: r.int(0, this.accounts - 1) } : { holder: r.int(0, this.profile.holders - 1) };
  }

  /** A filler transaction's kind, log count, gas and tip, and the PRNG materialize.ts continues from. */
  fillerShape(n: number, i: number, spam: boolean): { kind: FillerKind; logCount: number; gasUsed: bigint; tip: bigint; r: Random } {
    const p = this.profile;
    const r = rng(this.seed, 0xf1, n, i);
    const tip = BigInt(r.int(1, 30)) * (p.baseFeeWei / 30n + 1n);
    if (spam) {
      const logCount = Math.ceil(p.spamLogs / 2);
      return { kind: 'spam', logCount, gasUsed: BigInt(logCount) * 9_000n + 50_000n, tip, r };
    }
    let kind: FillerKind;
    if (r.chance(p.tokenTxShare)) kind = r.weighted(TOKEN_KINDS);
    else kind = r.chance(PLAIN_SHARE) ? 'plain' : 'other';
    const logCount =
      kind === 'plain' ? 0 : kind === 'other' ? Math.max(1, Math.round(this.otherLogs * (0.3 + 1.4 * r.next()))) : TOKEN_LOGS[kind];
    const gasUsed = kind === 'plain' ? 21_000n : BigInt(30_000 + logCount * 9_000 + r.int(0, 80_000));
    return { kind, logCount, gasUsed, tip, r };
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
