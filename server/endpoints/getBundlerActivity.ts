import { z } from 'zod';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { bundlerDetailsSchema, userOpSchema } from '../../shared/models/index.js';
import { toBundlerUserOp } from './bundlerOps.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getBundlerActivity = defineEndpoint({
  summary: 'The user operations a bundler (the bundle transaction sender) submitted, newest first.',
  description:
    "Answers the spec's `userOps` and, beside it, the `bundlerDetails` object explorers read " +
    '(address, total ops, the same page of ops in the bundler sample shape).',
  tag: 'Bundler',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ userOps: z.array(userOpSchema), bundlerDetails: bundlerDetailsSchema }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const [stats, ops] = await Promise.all([
      entityStats.find(ctx.db, network.chainId, 'bundler', input.address),
      userOps.listByBundler(ctx.db, network.chainId, input.address, input),
    ]);
    return {
      userOps: ops,
      bundlerDetails: { address: input.address, userOpsLength: stats?.userOpsCount ?? '0', userOps: ops.map(toBundlerUserOp) },
    };
  },
});
