/**
 * The networks opscan knows: the spec's chain-id → name map, the names real clients send that the
 * map lacks, and the local `devnet`. Pure data plus lookups; which of these a deployment actually
 * indexes is configuration (`NETWORKS`, see shared/config.ts).
 */

export type EntryPointVersion = 'v0.6' | 'v0.7' | 'v0.8' | 'v0.9';

export type NetworkInfo = {
  /** Canonical name: what the API answers with and what `NETWORKS` lists. */
  name: string;
  chainId: number;
  /** Blocks behind the head after which data is treated as final (reorg window). */
  finalityDepth: number;
  /** True for the 21 entries of the spec's network map (getNetworks answers the networks a deployment indexes). */
  inSpecMap: boolean;
};

// Finality depths follow Ponder's table: Ethereum and its testnets 65, Polygon 200, Arbitrum 240,
// anything else 30; the local devnet has no reorg window.
const L1 = 65;
const POLYGON = 200;
const ARBITRUM = 240;
const OTHER = 30;

const SPEC_MAP: ReadonlyArray<[number, string, number]> = [
  [1, 'mainnet', L1],
  [5, 'goerli', L1],
  [10, 'optimism', OTHER],
  [56, 'bsc', OTHER],
  [97, 'bnb-testnet', OTHER],
  [100, 'gnosis', OTHER],
  [122, 'fuse', OTHER],
  [137, 'matic', POLYGON],
  [250, 'fantom', OTHER],
  [420, 'optimism-goerli', OTHER],
  [4002, 'fantom-testnet', OTHER],
  [8453, 'base', OTHER],
  [42161, 'arbitrum-one', ARBITRUM],
  [43113, 'avalanche-fuji', OTHER],
  [43114, 'avalanche', OTHER],
  [80001, 'mumbai', POLYGON],
  [84531, 'base-testnet', OTHER],
  [84532, 'base-sepolia', OTHER],
  [421613, 'arbitrum-goerli', ARBITRUM],
  [421614, 'arbitrum-sepolia', ARBITRUM],
  [11155111, 'sepolia', L1],
];

/** Networks real clients (JiffyScan's explorer) use that the spec's map lacks, and the local devnets. */
const EXTRA: ReadonlyArray<[number, string, number]> = [
  [80002, 'polygon-amoy', POLYGON],
  [11155420, 'optimism-sepolia', OTHER],
  [7560, 'cyber-mainnet', OTHER],
  [656476, 'open-campus-test', OTHER],
  [911867, 'odyssey', OTHER],
  [10143, 'monad-testnet', OTHER],
  [666666666, 'degen', OTHER],
  [44787, 'celo-alfajores', OTHER],
  [324, 'zksync', OTHER],
  [31337, 'devnet', 0],
  // A second local chain (anvil --chain-id 31338), for running and testing several networks at once.
  [31338, 'devnet2', 0],
];

export const NETWORKS: ReadonlyArray<NetworkInfo> = [
  ...SPEC_MAP.map(([chainId, name, finalityDepth]) => ({ chainId, name, finalityDepth, inSpecMap: true })),
  ...EXTRA.map(([chainId, name, finalityDepth]) => ({ chainId, name, finalityDepth, inSpecMap: false })),
];

const byName = new Map(NETWORKS.map((n) => [n.name, n]));
const byChainId = new Map(NETWORKS.map((n) => [n.chainId, n]));

/** Names clients send for a network that are not its canonical name (after normalising). */
const ALIASES: Readonly<Record<string, string>> = {
  ethereum: 'mainnet',
  'ethereum-mainnet': 'mainnet',
  polygon: 'matic',
  'polygon-mainnet': 'matic',
  'op-mainnet': 'optimism',
  arbitrum: 'arbitrum-one',
  'bnb-smart-chain': 'bsc',
  'bsc-testnet': 'bnb-testnet',
  'polygon-mumbai': 'mumbai',
  'avalanche-c-chain': 'avalanche',
  anvil: 'devnet',
  localhost: 'devnet',
};

/**
 * Folds the spellings clients send into one form: `baseSepolia` → `base-sepolia`,
 * `OPEN_CAMPUS_TEST` → `open-campus-test`, `OP Mainnet` → `op-mainnet`.
 */
function normaliseName(raw: string): string {
  return raw
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
}

/** The network a client's name refers to, or undefined. Accepts aliases and any case. */
export function findNetwork(name: string): NetworkInfo | undefined {
  const folded = normaliseName(name);
  return byName.get(folded) ?? byName.get(ALIASES[folded] ?? '') ?? byName.get(name.trim().toLowerCase());
}

export function findNetworkByChainId(chainId: number): NetworkInfo | undefined {
  return byChainId.get(chainId);
}

/** The spec's getNetworks body: chain id (string key) → network name, the 21 entries. */
export function specNetworkMap(): Record<string, string> {
  return Object.fromEntries(NETWORKS.filter((n) => n.inSpecMap).map((n) => [String(n.chainId), n.name]));
}

/** Env-variable suffix of a network: upper case, `-` → `_` (`base-sepolia` → `BASE_SEPOLIA`). */
export function envSuffix(name: string): string {
  return name.toUpperCase().replace(/-/g, '_');
}
