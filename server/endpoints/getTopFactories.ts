import { z } from 'zod';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import { findNetworkByChainId } from '../../shared/networks.js';
import { factorySummarySchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { indexedNetworks, everyNetworkInput, pageInput } from './inputs.js';

export const getTopFactories = defineEndpoint({
  summary: 'Account factories ranked by accounts deployed (ties by address).',
  description: 'Without `network` the factories of every indexed network are ranked together; `network` says where each is.',
  tag: 'Factory',
  input: z.object({ network: everyNetworkInput, ...pageInput }),
  output: z.object({ factories: z.array(factorySummarySchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const chainIds = indexedNetworks(ctx, input.network).map((n) => n.chainId);
    const top = await entityStats.listTopFactories(ctx.db, chainIds, input);
    return {
      factories: top.map((f) => ({
        address: f.address,
        accountsLength: f.accountsCount,
        network: findNetworkByChainId(f.chainId)?.name ?? String(f.chainId),
      })),
    };
  },
});
