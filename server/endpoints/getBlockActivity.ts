import { z } from 'zod';
import { AppError } from '../../shared/errors.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { blockActivitySchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { blockNumberInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getBlockActivity = defineEndpoint({
  summary: 'The user operations of one block, in block order reversed (newest first).',
  description: 'The block is `blockNumber`; `block` (older clients) and `address` (the SDK) are accepted instead.',
  tag: 'User Operations',
  input: z.object({
    blockNumber: blockNumberInput.optional().describe('Block number.'),
    block: blockNumberInput.optional().describe('Alias of blockNumber.'),
    address: blockNumberInput.optional().describe('Alias of blockNumber (what the SDK sends).'),
    network: defaultedNetworkInput,
    ...pageInput,
  }),
  output: z.object({ block: blockActivitySchema }),
  cache: { finalWhen: ({ block }) => (block.blockTime === null ? [] : [{ network: block.network, blockNumber: block.blockNumber }]) },
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const blockNumber = input.blockNumber ?? input.block ?? input.address;
    if (blockNumber === undefined) {
      throw new AppError('BAD_REQUEST', 'Invalid parameter "blockNumber": is required (a block number)', { param: 'blockNumber' });
    }
    const [summary, ops] = await Promise.all([
      userOps.countInBlock(ctx.db, network.chainId, blockNumber),
      userOps.listByBlock(ctx.db, network.chainId, blockNumber, input),
    ]);
    return {
      block: {
        network: network.name,
        blockNumber: String(blockNumber),
        blockTime: summary.blockTime,
        userOpsLength: String(summary.count),
        userOps: ops,
      },
    };
  },
});
