import { z } from 'zod';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import { AppError } from '../../shared/errors.js';
import { factoryDetailsSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getFactoryDetails = defineEndpoint({
  summary: 'A factory: how many accounts it deployed, and those accounts, newest first.',
  description: 'A factory with no indexed deployment is a 404.',
  tag: 'Factory',
  input: z.object({ factory: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ factoryDetails: factoryDetailsSchema }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const [stats, deployed] = await Promise.all([
      entityStats.find(ctx.db, network.chainId, 'factory', input.factory),
      accounts.listByFactory(ctx.db, network.chainId, input.factory, input),
    ]);
    if (!stats) throw new AppError('NOT_FOUND', `No factory ${input.factory} on ${network.name}`, { param: 'factory' });
    return {
      factoryDetails: {
        address: input.factory,
        accountsLength: stats.accountsCount,
        network: network.name,
        accounts: deployed.map((a) => ({
          address: a.address,
          blockTime: a.createdBlockTime ?? '0',
          blockNumber: a.createdBlockNumber ?? '0',
          userOpsCount: a.userOpsCount,
          implementation: a.implementation,
        })),
      },
    };
  },
});
