/**
 * Turns "this account does something now" into a signed user operation: picks the action,
 * paymaster, nonce key and gas, adds initCode on the account's first op, hashes and signs.
 */
import { accountFamily, initCode, signatureScheme, type SmartAccount } from './accounts.js';
import { ACTION_WEIGHTS, buildAction, type Action } from './actions.js';
import { encodeExecution } from './calls.js';
import type { Deployment } from './deploy.js';
import type { Devnet } from './devnet.js';
import type { Random } from './random.js';
import { nonceWithKey, packPaymasterAndData, signUserOpHash, userOpHash, type EpVersion, type UserOp } from './userop.js';

export type SignedOp = {
  hash: string;
  version: EpVersion;
  entryPoint: string;
  op: UserOp;
  account: SmartAccount;
  /** Factory from initCode when this op deploys the account. */
  factory: string | null;
  paymaster: string | null;
  action: Action;
};

/** Nonce keys in use: the default 0, a small key and a large 192-bit one (2D nonces). */
export const NONCE_KEYS = { default: 0n, small: 0x2105n, large: (1n << 191n) | 0x4337n } as const;

const GWEI = 1_000_000_000n;

export type OpContext = { devnet: Devnet; deployment: Deployment; rng: Random; recipients: string[] };

/** The account's next op: `chosen` (a test's), or an action drawn at random. */
export function signNextOp(ctx: OpContext, account: SmartAccount, chosen?: Action): SignedOp {
  const { devnet, deployment: d, rng } = ctx;
  const version = account.version;
  const family = accountFamily(account);
  const action =
    chosen ??
    buildAction(rng.weighted(ACTION_WEIGHTS), {
      rng,
      family,
      account: account.address,
      deployment: d,
      recipients: ctx.recipients.filter((r) => r !== account.address),
      nextNftId: () => devnet.traffic.nextNftId++,
    });

  const deploys = !account.deployPlanned;
  account.deployPlanned = true;
  const key = rng.chance(0.8) ? NONCE_KEYS.default : rng.chance(0.5) ? NONCE_KEYS.small : NONCE_KEYS.large;
  const sequence = account.nonces.get(key) ?? 0n;
  account.nonces.set(key, sequence + 1n);

  const paymasterKind = rng.weighted({ none: 45, sponsor: 35, postOp: 20 });
  const paymaster =
    paymasterKind === 'none' ? null : paymasterKind === 'sponsor' ? d.sponsorPaymasters[version] : d.postOpPaymasters[version];

  // Generous limits: the EntryPoint refunds what is unused (minus v0.7+'s unused-gas penalty).
  const priority = rng.chance(0.5) ? GWEI : (3n * GWEI) / 2n;
  const legacyPricing = rng.chance(0.15); // maxFee == maxPriority takes v0.6/v0.7's legacy branch
  const op: UserOp = {
    sender: account.address,
    nonce: nonceWithKey(key, sequence),
    initCode: deploys ? initCode(account) : '0x',
    callData: encodeExecution(family, action.calls, action.batch).toLowerCase(),
    callGasLimit: 100_000n + 80_000n * BigInt(action.calls.length),
    verificationGasLimit: deploys ? 800_000n : 150_000n,
    preVerificationGas: 50_000n + BigInt(rng.int(0, 5000)),
    maxFeePerGas: legacyPricing ? 2n * GWEI : priority + 2n * GWEI,
    maxPriorityFeePerGas: legacyPricing ? 2n * GWEI : priority,
    paymasterAndData: paymaster
      ? packPaymasterAndData(version, paymaster, { verification: 60_000n, postOp: paymasterKind === 'postOp' ? 60_000n : 0n })
      : '0x',
    signature: '0x',
  };
  const hash = userOpHash(op, version, account.entryPoint, devnet.chainId);
  op.signature = signUserOpHash(hash, account.owner, signatureScheme(account));

  const signed: SignedOp = {
    hash,
    version,
    entryPoint: account.entryPoint,
    op,
    account,
    factory: deploys ? account.factory : null,
    paymaster,
    action,
  };
  devnet.traffic.submitted.set(hash, signed);
  return signed;
}

/**
 * Gas the bundle transaction should allow for these ops (over-provisioned; unused gas is refunded).
 * verificationGasLimit counts three times: v0.6 reserves it again for postOp when each op starts
 * executing (AA95 otherwise), and v0.7+ paymaster limits are of the same order.
 */
export function bundleGasLimit(ops: SignedOp[]): bigint {
  let gas = 150_000n;
  for (const { op } of ops) {
    gas += 3n * op.verificationGasLimit + op.callGasLimit + op.preVerificationGas + 150_000n;
    gas += 40n * BigInt((op.callData.length + op.initCode.length + op.signature.length + op.paymasterAndData.length) / 2 + 600);
  }
  return gas;
}
