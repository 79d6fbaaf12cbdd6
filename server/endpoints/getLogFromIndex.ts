import { z } from 'zod';
import * as logs from '../../shared/db/tables/logs.js';
import { AppError } from '../../shared/errors.js';
import { logSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { withEventName } from './getUserOpLogs.js';
import { hashInput, logIndexInput, networkHolding, searchedNetworkInput } from './inputs.js';

export const getLogFromIndex = defineEndpoint({
  summary: 'One log of a bundle transaction, by its index.',
  description: "`logIndex` is the block-level log index; `logIndec` (the SDK's spelling) is accepted too. A missing log is a 404.",
  tag: 'User Operations',
  input: z.object({
    transactionHash: hashInput,
    logIndex: logIndexInput.optional(),
    logIndec: logIndexInput.optional().describe('Alias of logIndex (the SDK sends this spelling).'),
    network: searchedNetworkInput,
  }),
  output: z.object({ log: logSchema }),
  cache: { finalWhen: ({ log }, { network }) => [{ network, blockNumber: log.blockNumber }] },
  async handler(ctx, input) {
    const logIndex = input.logIndex ?? input.logIndec;
    if (logIndex === undefined) {
      throw new AppError('BAD_REQUEST', 'Invalid parameter "logIndex": is required (a log index)', { param: 'logIndex' });
    }
    const find = (chainId: number) => logs.find(ctx.db, chainId, input.transactionHash, logIndex);
    const network = await networkHolding(ctx, input.network, async (n) => (await find(n.chainId)) !== null);
    const log = network && (await find(network.chainId));
    if (!log) {
      const where = network ? network.name : 'any indexed network';
      throw new AppError('NOT_FOUND', `No log ${logIndex} in transaction ${input.transactionHash} on ${where}`, {
        param: 'logIndex',
      });
    }
    return { log: withEventName(log) };
  },
});
