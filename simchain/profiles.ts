/**
 * What each simulated network looks like: block time, density, populations and EntryPoint mix.
 * Orders of magnitude of the real networks (Base and Polygon: a block every 2 s, ~200 transactions and
 * ~1,000 logs, several hundred of them token transfers, a handful of bundles; Arbitrum 0.25 s;
 * Ethereum 12 s), used as parameters, not facts. `guess: true` marks a profile given by resemblance
 * to a measured one (a testnet like its mainnet, thinner), not from those figures.
 */
import { findNetwork } from '../shared/networks.js';
import type { EpVersion } from '../devnet/userop.js';

export type Profile = {
  /** The network's canonical name (shared/networks.ts). */
  name: string;
  chainId: number;
  blockTimeMs: number;
  /** First block served when --from-block is not given: about the real network's height. */
  defaultFromBlock: number;
  /** Mean transactions per block (±20 %). */
  txPerBlock: number;
  /** Mean logs per block, bundles included. */
  logsPerBlock: number;
  /** Share of filler transactions that move tokens (ERC-20, swaps, NFTs); the rest are plain or other contracts'. */
  tokenTxShare: number;
  /** Mean bundle transactions per block (Poisson). */
  bundlesPerBlock: number;
  /** Mean ops per bundle (1 + Poisson). */
  opsPerBundle: number;
  /** Accounts deployed per block (their first op carries initCode), on top of the established population's ops. */
  deploysPerBlock: number;
  entryPoints: Readonly<Record<EpVersion, number>>;
  /** Established smart accounts (ops' senders); --accounts overrides. */
  accounts: number;
  /** EOAs the filler traffic moves tokens between. */
  holders: number;
  tokens: number;
  bundlers: number;
  paymasters: number;
  /** Share of ops with a paymaster, and of ops whose execution reverts. */
  paymasterShare: number;
  failedOpShare: number;
  /** Every spamEvery-th block carries spamLogs extra ERC-20 Transfer logs (airdrop spam); 0 for none. */
  spamEvery: number;
  spamLogs: number;
  /** Base fee of a quiet block, in wei (blocks vary around it). */
  baseFeeWei: bigint;
  /** OP-stack receipts carry an L1 data fee (l1Fee) that the sender pays on top. */
  opStack: boolean;
  guess: boolean;
};

type Row = Omit<Profile, 'name' | 'chainId'>;

const MIX_L2: Profile['entryPoints'] = { 'v0.6': 0.35, 'v0.7': 0.55, 'v0.8': 0.1 };
const MIX_L1: Profile['entryPoints'] = { 'v0.6': 0.45, 'v0.7': 0.5, 'v0.8': 0.05 };

const base: Row = {
  blockTimeMs: 2000,
  defaultFromBlock: 25_000_000,
  txPerBlock: 200,
  logsPerBlock: 1000,
  tokenTxShare: 0.6,
  bundlesPerBlock: 5,
  opsPerBundle: 1.6,
  deploysPerBlock: 0.5,
  entryPoints: MIX_L2,
  accounts: 1_000_000,
  holders: 200_000,
  tokens: 400,
  bundlers: 12,
  paymasters: 8,
  paymasterShare: 0.6,
  failedOpShare: 0.03,
  spamEvery: 0,
  spamLogs: 0,
  baseFeeWei: 5_000_000n,
  opStack: true,
  guess: false,
};

/** A thin testnet of the same kind as `like`. */
const testnet = (like: Row, defaultFromBlock: number): Row => ({
  ...like,
  defaultFromBlock,
  txPerBlock: 12,
  logsPerBlock: 40,
  bundlesPerBlock: 0.3,
  opsPerBundle: 1.2,
  deploysPerBlock: 0.05,
  accounts: 20_000,
  holders: 5_000,
  tokens: 40,
  bundlers: 4,
  paymasters: 3,
  spamEvery: 0,
  spamLogs: 0,
  guess: true,
});

const mainnet: Row = {
  ...base,
  blockTimeMs: 12_000,
  defaultFromBlock: 21_000_000,
  txPerBlock: 150,
  logsPerBlock: 1000,
  bundlesPerBlock: 1,
  opsPerBundle: 1.3,
  deploysPerBlock: 0.3,
  entryPoints: MIX_L1,
  baseFeeWei: 8_000_000_000n,
  opStack: false,
};
const polygon: Row = {
  ...base,
  defaultFromBlock: 65_000_000,
  spamEvery: 500,
  spamLogs: 12_000,
  baseFeeWei: 30_000_000_000n,
  opStack: false,
};
const arbitrum: Row = {
  ...base,
  blockTimeMs: 250,
  defaultFromBlock: 300_000_000,
  txPerBlock: 20,
  logsPerBlock: 60,
  bundlesPerBlock: 0.4,
  opsPerBundle: 1.3,
  deploysPerBlock: 0.04,
  tokens: 200,
  baseFeeWei: 10_000_000n,
  opStack: false,
};
const optimism: Row = {
  ...base,
  defaultFromBlock: 130_000_000,
  txPerBlock: 30,
  logsPerBlock: 150,
  bundlesPerBlock: 0.6,
  deploysPerBlock: 0.08,
  tokens: 200,
  guess: true,
};
const bsc: Row = {
  ...base,
  blockTimeMs: 3000,
  defaultFromBlock: 45_000_000,
  txPerBlock: 150,
  logsPerBlock: 700,
  bundlesPerBlock: 1,
  deploysPerBlock: 0.1,
  baseFeeWei: 1_000_000_000n,
  opStack: false,
  guess: true,
};
const sidechain = (blockTimeMs: number, defaultFromBlock: number): Row => ({
  ...base,
  blockTimeMs,
  defaultFromBlock,
  txPerBlock: 25,
  logsPerBlock: 100,
  bundlesPerBlock: 0.2,
  deploysPerBlock: 0.02,
  accounts: 50_000,
  holders: 20_000,
  tokens: 100,
  bundlers: 4,
  paymasters: 3,
  baseFeeWei: 1_000_000_000n,
  opStack: false,
  guess: true,
});

/** Network name → profile row; every network of the spec's map (shared/networks.ts) has one. */
const PROFILES: Readonly<Record<string, Row>> = {
  base,
  matic: polygon,
  'arbitrum-one': arbitrum,
  mainnet,
  optimism,
  bsc,
  gnosis: sidechain(5000, 38_000_000),
  fuse: sidechain(5000, 33_000_000),
  fantom: sidechain(1000, 100_000_000),
  avalanche: { ...sidechain(2000, 55_000_000), txPerBlock: 40, logsPerBlock: 200, bundlesPerBlock: 0.3 },
  goerli: testnet(mainnet, 10_000_000),
  sepolia: testnet(mainnet, 7_500_000),
  'optimism-goerli': testnet(optimism, 20_000_000),
  'bnb-testnet': testnet(bsc, 48_000_000),
  'fantom-testnet': testnet(sidechain(1000, 0), 30_000_000),
  'avalanche-fuji': testnet(sidechain(2000, 0), 38_000_000),
  mumbai: testnet(polygon, 47_000_000),
  'base-testnet': testnet(base, 13_000_000),
  'base-sepolia': testnet(base, 20_000_000),
  'arbitrum-goerli': testnet(arbitrum, 60_000_000),
  'arbitrum-sepolia': testnet(arbitrum, 100_000_000),
};

export const PROFILE_NAMES: readonly string[] = Object.keys(PROFILES);

/** The profile of a network name or alias (`polygon` → matic, `arbitrum` → arbitrum-one); throws on an unknown name. */
export function findProfile(name: string): Profile {
  const network = findNetwork(name);
  const row = network && PROFILES[network.name];
  if (!network || !row) throw new Error(`unknown profile "${name}": one of ${PROFILE_NAMES.join(', ')} (or an alias: polygon, arbitrum)`);
  return { name: network.name, chainId: network.chainId, ...row };
}
