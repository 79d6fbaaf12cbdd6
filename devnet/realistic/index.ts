/**
 * The realistic devnet: real-world ERC-4337 traffic on a local chain. Two Alto bundler processes
 * (from npm) bundle ops that viem and permissionless build and sign for real account
 * implementations — SimpleAccount on EntryPoint v0.6 to v0.9, Simple7702Account with EIP-7702
 * authorizations (v0.8, v0.9), Safe 1.4.1 with its 4337 module, OpenZeppelin's ERC-7579 account,
 * and the wallet vendors' own (Kernel v2.1-v3.3, Biconomy v2, Nexus, LightAccount, Safe7579,
 * Thirdweb, Trust, Etherspot, Coinbase Smart Wallet v1; vendorContracts.ts deploys them at their
 * mainnet addresses; MetaMask's Hybrid and EIP-7702 Stateless DeleGators, delegationFramework.ts) —
 * sponsored or charged in a token by Pimlico's singleton paymaster. What the generator asked for
 * and what the bundler answered (eth_getUserOperationReceipt) are recorded for every op: two truths
 * an indexer is checked against, neither computed by it.
 *
 *   const rd = await startRealisticDevnet();
 *   await generateRealistic(rd, { ops: 100 });   // rd.devnet.truth, rd.records
 *   await rd.stop();
 */
import { HDNodeWallet, keccak256, toUtf8Bytes } from 'ethers';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC, type StartChainOptions } from '../chain.js';
import type { Deployment } from '../deploy.js';
import { startDevnet, type Devnet } from '../devnet.js';
import { headBlock } from '../mining.js';
import { Random } from '../random.js';
import { computeDays, type GroundTruth } from '../truth.js';
import type { AccountType, RealAccount } from './accounts.js';
import { startBundler, type Bundler } from './bundler.js';
import { createOperator, deployRealisticContracts, realisticContractNames, type Operator, type RealisticContracts } from './contracts.js';
import type { RealisticRecord } from './record.js';
import { sendRealisticTraffic } from './traffic.js';
import { startTicker, type Ticker } from '../ticker.js';
import { deployDelegationFramework, type DelegationFramework } from './delegationFramework.js';
import { deployVendorContracts } from './vendorContracts.js';
import { attestDevnetModules } from './moduleRegistry.js';
import { sendDelegationLifecycle, type DelegationRecord } from './delegations.js';

export { ACCOUNT_KINDS, ACCOUNT_TYPES, ENTRY_POINT_OF, type AccountType, type ExecutionMode } from './accounts.js';
export type { RealisticRecord, ExpectedOutcome, BundlerReceipt } from './record.js';
export type { DelegationRecord } from './delegations.js';

export type RealisticDevnet = {
  devnet: Devnet;
  base: { [K in keyof Deployment]: Deployment[K] extends string ? Address : Deployment[K] };
  contracts: RealisticContracts;
  /** MetaMask's DeleGator contracts (delegationFramework.ts). */
  delegationFramework: DelegationFramework;
  bundlers: Bundler[];
  /** Deploys the contracts and funds the accounts (anvil account 12). */
  operator: Operator;
  paymasterSigner: PrivateKeyAccount;
  accounts: RealAccount[];
  /** One per op sent, in the order they were included. */
  records: RealisticRecord[];
  /** The EIP-7702 lifecycle's authorizations (delegations.ts), sent once, after the first traffic. */
  delegations: DelegationRecord[];
  rng: Random;
  ownerKey(index: number): Hex;
  opsPlanned: number;
  nextNonceKey: number;
  /** Per account type, how many of its execution-mode turns have gone out (traffic.ts). */
  modeTurns: Map<AccountType, number>;
  /** How many ops meant to revert in execution have gone out: each takes the next failure kind (traffic.ts). */
  failureTurns: number;
  nextNftId: bigint;
  /** Says what the traffic did about an op that did not land (a re-send, a re-signed authorization). */
  report(message: string): void;
  stop(): Promise<void>;
};

export type StartRealisticOptions = Pick<StartChainOptions, 'port' | 'chainId' | 'genesisTimestamp'> & {
  /** Bundler processes competing on the chain (default 2). */
  bundlers?: number;
  seed?: number;
  /** Where the traffic's re-sends are reported (default: a line on stderr each). */
  report?: (message: string) => void;
};

/** anvil's accounts: 0-6 are the devnet's own, 12 the operator, 13-18 the bundlers, 19 the paymaster signer. */
const OPERATOR = 12;
const FIRST_BUNDLER_KEY = 13;
const PAYMASTER_SIGNER = 19;

export async function startRealisticDevnet(opts: StartRealisticOptions = {}): Promise<RealisticDevnet> {
  // The chain starts now unless asked to start earlier (to hold generated history before the live
  // traffic: generateRealistic brings the chain's clock up to the wall clock first).
  const devnet = await startDevnet({
    port: opts.port,
    chainId: opts.chainId,
    accounts: 20,
    genesisTimestamp: opts.genesisTimestamp ?? Math.floor(Date.now() / 1000),
  });
  const bundlers: Bundler[] = [];
  try {
    const root = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0");
    const key = (i: number): Hex => root.deriveChild(i).privateKey as Hex;
    const operator = createOperator(devnet, key(OPERATOR));
    const paymasterSigner = privateKeyToAccount(key(PAYMASTER_SIGNER));
    const contracts = await deployRealisticContracts(devnet, operator, paymasterSigner.address);
    const delegationFramework = await devnet.exclusive(async () => {
      await deployVendorContracts(devnet.rpc);
      await attestDevnetModules(operator, contracts.erc7579Modules);
      return deployDelegationFramework(devnet.rpc);
    });
    devnet.truth.entryPoints = { ...devnet.truth.entryPoints, 'v0.9': contracts.entryPoints['v0.9'] };
    devnet.truth.contracts = { ...devnet.truth.contracts, ...realisticContractNames(contracts) };
    const count = opts.bundlers ?? 2;
    const started = await Promise.all(
      Array.from({ length: count }, (_, b) => {
        const [exec1, exec2, utility] = [0, 1, 2].map((k) => FIRST_BUNDLER_KEY + 3 * b + k);
        return startBundler({
          name: `alto-${b + 1}`,
          rpcUrl: devnet.rpcUrl,
          entryPoints: Object.values(contracts.entryPoints),
          executorKeys: [key(exec1!), key(exec2!)],
          executorAddresses: [exec1!, exec2!].map((i) => root.deriveChild(i).address),
          utilityKey: key(utility!),
        });
      }),
    );
    bundlers.push(...started);
    const seed = opts.seed ?? 1;
    const rd: RealisticDevnet = {
      devnet,
      base: devnet.deployment as RealisticDevnet['base'],
      contracts,
      delegationFramework,
      bundlers,
      operator,
      paymasterSigner,
      accounts: [],
      records: [],
      delegations: [],
      rng: new Random(seed),
      ownerKey: (index) => keccak256(toUtf8Bytes(`opscan-realistic-owner-${seed}-${index}`)) as Hex,
      opsPlanned: 0,
      nextNonceKey: 0,
      modeTurns: new Map(),
      failureTurns: 0,
      nextNftId: 1_000_000n,
      report: opts.report ?? ((message) => process.stderr.write(`realistic devnet: ${message}\n`)),
      async stop() {
        await Promise.all(bundlers.map((b) => b.stop()));
        await devnet.stop();
      },
    };
    return rd;
  } catch (err) {
    await Promise.all(bundlers.map((b) => b.stop()));
    await devnet.stop();
    throw err;
  }
}

export type GenerateRealisticOptions = { ops: number; onProgress?: (done: number) => void };

/** Sends `ops` more ops; returns the devnet's ground truth (everything recorded so far). */
export async function generateRealistic(rd: RealisticDevnet, opts: GenerateRealisticOptions): Promise<GroundTruth> {
  await rd.devnet.exclusive(async () => {
    // Bundlers and paymasters judge validity windows by the wall clock: a chain whose generated
    // history ran behind it is brought up to now by one empty block.
    const now = Math.floor(Date.now() / 1000);
    if ((await headBlock(rd.devnet.rpc)).timestamp < now) await rd.devnet.rpc.call('evm_mine', [now]);
    await sendRealisticTraffic(rd, opts.ops, opts.onProgress);
    if (rd.delegations.length === 0) rd.delegations.push(...(await sendDelegationLifecycle(rd)));
  });
  rd.devnet.truth.days = computeDays(rd.devnet.truth);
  return rd.devnet.truth;
}

export type RealisticContinuous = Ticker;

/** Live traffic: `opsPerTick` ops through the bundlers every `intervalMs`, recorded like the rest. */
export function startRealisticContinuous(
  rd: RealisticDevnet,
  opts: { intervalMs: number; opsPerTick: number; onError?: (err: unknown) => void },
): RealisticContinuous {
  const onError = opts.onError ?? ((err: unknown) => process.stderr.write(`realistic devnet traffic: ${String(err)}\n`));
  return startTicker(() => generateRealistic(rd, { ops: opts.opsPerTick }), { intervalMs: opts.intervalMs, onError });
}

/**
 * The truth file: the ground truth with each op extended by the generator's record of it (account
 * type, calls asked for, paymaster mode, expected outcome, the bundler's receipt).
 */
export function realisticTruthFile(
  rd: RealisticDevnet,
): GroundTruth & { bundlers: Array<{ name: string; url: string; executors: string[] }>; delegations: DelegationRecord[] } {
  const records = new Map(rd.records.map((r) => [r.userOpHash, r]));
  const truth = rd.devnet.truth;
  return {
    ...truth,
    userOps: truth.userOps.map((op) => ({ ...op, ...records.get(op.userOpHash as Hex) })),
    bundlers: rd.bundlers.map((b) => ({ name: b.name, url: b.url, executors: b.executors })),
    delegations: rd.delegations,
  };
}
