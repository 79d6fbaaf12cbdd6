import { z } from 'zod';
import * as userOps from '../../shared/db/tables/userOps.js';
import { opFailureSchema, userOpSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { hashInput, indexedNetworks, everyNetworkInput } from './inputs.js';
import { opFailure } from './opFailures.js';

export const getUserOp = defineEndpoint({
  summary: 'A user operation by hash, on one network or on every indexed network.',
  description:
    'Not found is 200 `{"userOps": []}` (clients poll until the op is indexed). Without `network` every indexed ' +
    'network is searched and each match is one item. `failure` says why a failed op failed (null when it succeeded): ' +
    'its stage, the revert data decoded and the call that raised it.',
  tag: 'User Operations',
  input: z.object({ hash: hashInput, network: everyNetworkInput }),
  output: z.object({ userOps: z.array(userOpSchema.extend({ failure: opFailureSchema.nullable() })) }),
  cache: {
    // A failure without its frame may be one the node could not trace yet: such an answer stays head
    // data, so a later request traces the op again.
    finalWhen: ({ userOps }) =>
      userOps.some((op) => op.failure && !op.failure.frame)
        ? []
        : userOps.map((op) => ({ network: op.network, blockNumber: op.blockNumber })),
  },
  async handler(ctx, input) {
    const networks = indexedNetworks(ctx, input.network);
    const found = await userOps.listByHash(
      ctx.db,
      networks.map((n) => n.chainId),
      input.hash,
    );
    return {
      userOps: await Promise.all(
        // Every op found is on one of the networks asked.
        found.map(async (op) => ({
          ...op,
          failure: await opFailure(
            ctx,
            networks.find((n) => n.chainId === op.chainId)!,
            op,
          ),
        })),
      ),
    };
  },
});
