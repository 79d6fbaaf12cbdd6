import { z } from 'zod';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import { globalCountsSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput } from './inputs.js';

export const getGlobalCounts = defineEndpoint({
  summary: 'Network-wide totals: user operations, bundles, wallets created.',
  tag: 'Metrics',
  input: z.object({ network: defaultedNetworkInput }),
  output: z.object({ metrics: globalCountsSchema }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const totals = await dailyStats.sumAll(ctx.db, network.chainId);
    return {
      metrics: {
        id: network.name,
        userOpCounter: totals.userOps,
        bundleCounter: totals.bundles,
        walletsCreated: totals.walletsCreated,
      },
    };
  },
});
