import { z } from 'zod';
import type { NetworkConfig } from '../../shared/config.js';
import type { IndexerState } from '../../shared/db/tables/indexerState.js';
import { networkStatusSchema, type NetworkStatus } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput } from './inputs.js';

export const getNetworkStatus = defineEndpoint({
  summary: 'Where the indexer stands on a network: chain head, last indexed block, lag, backfill done.',
  description:
    'A network the indexer has not started yet answers zeros and backfillComplete false. ' +
    '`writeFailure` is null while batches commit; while the indexer fails to write the block after indexedBlock it says ' +
    'which blocks, why, how many attempts and since when.',
  tag: 'Supported Networks',
  input: z.object({ network: defaultedNetworkInput }),
  output: networkStatusSchema,
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    // The indexer view is at most a second old: the same freshness as a cached answer.
    return networkStatusOf(network, (await ctx.services.indexer.current()).get(network.chainId));
  },
});

/** Where the indexer stands on `network` (zeros before it started); the status page shows it too. */
export function networkStatusOf(network: NetworkConfig, state: IndexerState | undefined): NetworkStatus {
  const headBlock = state?.headBlock ?? 0;
  const indexedBlock = state?.indexedBlock ?? 0;
  return {
    network: network.name,
    chainId: network.chainId,
    headBlock,
    indexedBlock,
    lagBlocks: Math.max(0, headBlock - indexedBlock),
    backfillComplete: state?.backfillComplete ?? false,
    writeFailure: state?.writeFailure ?? null,
  };
}
