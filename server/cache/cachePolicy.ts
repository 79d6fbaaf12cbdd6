import type { NetworkConfig } from '../../shared/config.js';
import type { IndexerState } from '../../shared/db/tables/indexerState.js';

/**
 * How long an endpoint's answer may be reused (declared on the endpoint, applied by callEndpoint):
 * - 'none': not cached (constant or trivially cheap answers);
 * - 'head': depends on the indexed head (latest lists, entity pages, metrics): about one block,
 *   and dropped as soon as the network's reorg epoch changes;
 * - 'live': chain state read over RPC (balances): about one block, independent of the indexer;
 * - finalWhen: answers about specific blocks (an op, a bundle, a log): kept long once every block
 *   the answer names is past its network's finality depth, else treated like 'head'. An answer that
 *   names no block (nothing found yet) is never final. A block on no named network (a hash looked up
 *   without `network`, whose answer does not say where it was found) is on the answer's network when
 *   the deployment serves one, else it is never final.
 */
export type CachePolicy<TOutput = unknown, TInput = unknown> =
  | 'none'
  | 'head'
  | 'live'
  | { finalWhen: (output: TOutput, input: TInput) => Array<{ network: string | undefined; blockNumber: string | number }> };

/** Typical block times; the TTL of head-dependent answers. Unlisted networks: 2 s. */
const BLOCK_TIME_MS: Readonly<Record<string, number>> = {
  mainnet: 12_000,
  sepolia: 12_000,
  goerli: 12_000,
  gnosis: 5_000,
  fuse: 5_000,
  bsc: 3_000,
  'bnb-testnet': 3_000,
  devnet: 1_000,
  'arbitrum-one': 1_000,
  'arbitrum-sepolia': 1_000,
  'arbitrum-goerli': 1_000,
  fantom: 1_000,
  'fantom-testnet': 1_000,
};
const DEFAULT_BLOCK_TIME_MS = 2_000;

/** Tag of entries valid whatever the reorg epoch (live chain reads). */
export const ANY_EPOCH = 'f';

/** The reorg epochs of the networks an answer depends on: an entry is valid only under the same tag. */
export function epochTag(networks: readonly NetworkConfig[], states: ReadonlyMap<number, IndexerState>): string {
  return `e${networks.map((n) => states.get(n.chainId)?.reorgEpoch ?? 0).join('.')}`;
}

/**
 * The tag of final answers: valid across ordinary reorgs, but not across one that removed blocks
 * held final (final_epoch counts those), after which the answer may name an orphaned block.
 */
export function finalTag(networks: readonly NetworkConfig[], states: ReadonlyMap<number, IndexerState>): string {
  return `${ANY_EPOCH}${networks.map((n) => states.get(n.chainId)?.finalEpoch ?? 0).join('.')}`;
}

/** The indexed heads the answer is computed at, in the order of epochTag (server/cache/cacheEntry.ts). */
export function headTag(networks: readonly NetworkConfig[], states: ReadonlyMap<number, IndexerState>): string {
  return `h${networks.map((n) => states.get(n.chainId)?.indexedBlock ?? 0).join('.')}`;
}

export function headTtlMs(networks: readonly NetworkConfig[]): number {
  const times = networks.map((n) => BLOCK_TIME_MS[n.name] ?? DEFAULT_BLOCK_TIME_MS);
  return Math.max(1000, Math.min(...times, 60_000));
}

/** Whether the answer may outlive reorgs, and for how long it is kept. */
export function decideTtl<TOutput, TInput>(
  policy: Exclude<CachePolicy<TOutput, TInput>, 'none'>,
  output: TOutput,
  input: TInput,
  context: { networks: readonly NetworkConfig[]; states: ReadonlyMap<number, IndexerState>; finalTtlMs: number },
): { final: boolean; ttlMs: number } {
  const headTtl = headTtlMs(context.networks);
  if (policy === 'head') return { final: false, ttlMs: headTtl };
  if (policy === 'live') return { final: true, ttlMs: headTtl };
  const blocks = policy.finalWhen(output, input);
  const final =
    blocks.length > 0 &&
    blocks.every(({ network, blockNumber }) => {
      const config =
        network === undefined
          ? context.networks.length === 1
            ? context.networks[0]
            : undefined
          : context.networks.find((n) => n.name === network);
      const state = config && context.states.get(config.chainId);
      return !!state && Number(blockNumber) <= state.indexedBlock - config.finalityDepth;
    });
  return final ? { final: true, ttlMs: context.finalTtlMs } : { final: false, ttlMs: headTtl };
}

/** ±10 % so that entries written together do not all expire together. */
export function jitter(ttlMs: number): number {
  return Math.round(ttlMs * (0.9 + Math.random() * 0.2));
}
