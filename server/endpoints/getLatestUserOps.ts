import { z } from 'zod';
import * as userOps from '../../shared/db/tables/userOps.js';
import { userOpSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getLatestUserOps = defineEndpoint({
  summary: 'The latest user operations of a network, newest first.',
  tag: 'User Operations',
  input: z.object({ network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ userOps: z.array(userOpSchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    return { userOps: await userOps.listLatest(ctx.db, network.chainId, input) };
  },
});
