import { z } from 'zod';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import { AppError } from '../../shared/errors.js';
import { hashOut } from '../../shared/models/primitives.js';
import { findNetworkByChainId } from '../../shared/networks.js';
import { traceSchema } from '../../shared/models/trace.js';
import { toTrace } from './callTraces.js';
import { defineEndpoint } from './defineEndpoint.js';
import { hashInput, networkHolding, searchedNetworkInput } from './inputs.js';

export const getTrxTraces = defineEndpoint({
  summary: "A bundle transaction's whole call tree, each frame with its method, decoded input and user-operation stage.",
  description:
    '`trace` holds one root frame (the transaction) whose `subtraces` are its child frames, nested. Traced live on the ' +
    "network's node (debug_traceTransaction with callTracer), only for transactions indexed as bundles: any other " +
    '`trxHash` is a 404. `stage` is `bundle` outside any op, else `validation` (account creation, validateUserOp, ' +
    'validatePaymasterUserOp), `execution` (innerHandleOp) or `postOp`. A node without the debug API is a 503; a node ' +
    'that fails is a 502.',
  tag: 'User Operations',
  input: z.object({ network: searchedNetworkInput, trxHash: hashInput }),
  output: z.object({ transactionHash: hashOut, chainId: z.number().int(), trace: z.array(traceSchema) }),
  // A transaction's trace changes only if a reorg moves it: final once its block is.
  cache: {
    finalWhen: ({ trace, chainId }) =>
      trace.map((root) => ({ network: findNetworkByChainId(chainId)?.name, blockNumber: root.blockNumber })),
  },
  async handler(ctx, input) {
    const network = await networkHolding(ctx, input.network, (n) => bundleTransactions.exists(ctx.db, n.chainId, input.trxHash));
    const tx = network && (await bundleTransactions.findByHash(ctx.db, network.chainId, input.trxHash));
    if (!network || !tx) {
      const where = network ? network.name : 'any indexed network';
      throw new AppError('NOT_FOUND', `No bundle transaction ${input.trxHash} is indexed on ${where}`, { param: 'trxHash' });
    }
    const frame = await ctx.services.chain.traceTransaction(network, tx.txHash);
    const placement = { network, blockHash: tx.blockHash, blockNumber: Number(tx.blockNumber) };
    return {
      transactionHash: tx.txHash,
      chainId: network.chainId,
      trace: [toTrace(frame, placement, { traceAddress: [], stage: 'bundle' })],
    };
  },
});
