/**
 * A running devnet: the anvil chain, the EOAs that deploy and bundle, the deployed contracts, the
 * traffic state (accounts, nonces, signed ops) and the ground truth recorded so far.
 */
import { HDNodeWallet, Wallet, keccak256, toUtf8Bytes } from 'ethers';
import type { SmartAccount } from './accounts.js';
import { ANVIL_MNEMONIC, startChain, type StartChainOptions } from './chain.js';
import { canonicalEntryPoints, contractNames, deployContracts, type Deployment } from './deploy.js';
import type { SignedOp } from './ops.js';
import type { Rpc } from './rpc.js';
import { LocalSigner } from './signer.js';
import { emptyTruth, type GroundTruth } from './truth.js';

export type TrafficState = {
  accounts: SmartAccount[];
  nextAccountId: number;
  nextNftId: bigint;
  /** Every op ever signed, by userOpHash (a reorg re-includes some of them unchanged). */
  submitted: Map<string, SignedOp>;
};

export type Devnet = {
  rpcUrl: string;
  port: number;
  chainId: number;
  rpc: Rpc;
  /** anvil's process id. */
  pid: number;
  /** anvil dev account 0: deploys and funds. */
  deployer: LocalSigner;
  /** anvil dev accounts 1..4: send handleOps transactions. */
  bundlers: LocalSigner[];
  /** anvil dev accounts 5..6: beneficiaries that differ from every bundler. */
  beneficiaries: string[];
  /** Plain EOAs that receive transfers. */
  recipients: string[];
  deployment: Deployment | null;
  /** Everything recorded so far (generate, startContinuous and reorg keep it current). */
  truth: GroundTruth;
  traffic: TrafficState;
  /** Runs `fn` after any other traffic job on this devnet (they share nonces and the mempool). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
};

export type StartDevnetOptions = StartChainOptions & {
  /** Deploy the EntryPoints and fixtures right away (default true). */
  deploy?: boolean;
};

const DAY = 86400;
const BUNDLER_COUNT = 4;

/** Midnight UTC `days` days ago: generated history then ends around today. */
export function defaultGenesisTimestamp(days = 3, nowMs = Date.now()): number {
  return (Math.floor(nowMs / 1000 / DAY) - days) * DAY;
}

export async function startDevnet(opts: StartDevnetOptions = {}): Promise<Devnet> {
  const chain = await startChain({ ...opts, genesisTimestamp: opts.genesisTimestamp ?? defaultGenesisTimestamp() });
  try {
    const root = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0");
    const devAccount = (i: number): Wallet => new Wallet(root.deriveChild(i).privateKey);
    const signer = (i: number): LocalSigner => new LocalSigner(devAccount(i), chain.chainId);
    let queue: Promise<unknown> = Promise.resolve();
    const devnet: Devnet = {
      ...chain,
      deployer: signer(0),
      bundlers: Array.from({ length: BUNDLER_COUNT }, (_, i) => signer(i + 1)),
      beneficiaries: [5, 6].map((i) => devAccount(i).address.toLowerCase()),
      recipients: Array.from({ length: 8 }, (_, i) => `0x${keccak256(toUtf8Bytes(`opscan-devnet-recipient-${i}`)).slice(26)}`),
      deployment: null,
      truth: emptyTruth(chain.chainId, canonicalEntryPoints(), {}),
      traffic: { accounts: [], nextAccountId: 1, nextNftId: 1n, submitted: new Map() },
      exclusive<T>(fn: () => Promise<T>): Promise<T> {
        const run = queue.then(fn, fn);
        queue = run.catch(() => undefined);
        return run;
      },
    };
    await Promise.all([devnet.deployer, ...devnet.bundlers].map((s) => s.syncNonce(chain.rpc)));
    if (opts.deploy !== false) await deployAll(devnet);
    return devnet;
  } catch (err) {
    await chain.stop();
    throw err;
  }
}

/** Deploys the EntryPoints and fixtures once; later calls return the same deployment. */
export async function deployAll(devnet: Devnet): Promise<Deployment> {
  if (devnet.deployment) return devnet.deployment;
  return devnet.exclusive(async () => {
    if (devnet.deployment) return devnet.deployment;
    const deployment = await deployContracts(devnet);
    devnet.deployment = deployment;
    devnet.truth = emptyTruth(devnet.chainId, { ...deployment.entryPoints }, contractNames(deployment));
    return deployment;
  });
}
