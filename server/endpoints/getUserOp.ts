import { z } from 'zod';
import * as userOps from '../../shared/db/tables/userOps.js';
import { userOpSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { hashInput, indexedNetworks, everyNetworkInput } from './inputs.js';

export const getUserOp = defineEndpoint({
  summary: 'A user operation by hash, on one network or on every indexed network.',
  description:
    'Not found is 200 `{"userOps": []}` (clients poll until the op is indexed). Without `network` every indexed ' +
    'network is searched and each match is one item.',
  tag: 'User Operations',
  input: z.object({ hash: hashInput, network: everyNetworkInput }),
  output: z.object({ userOps: z.array(userOpSchema) }),
  cache: { finalWhen: ({ userOps }) => userOps.map((op) => ({ network: op.network, blockNumber: op.blockNumber })) },
  async handler(ctx, input) {
    const chainIds = indexedNetworks(ctx, input.network).map((n) => n.chainId);
    return { userOps: await userOps.listByHash(ctx.db, chainIds, input.hash) };
  },
});
