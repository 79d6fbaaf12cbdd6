import { z } from 'zod';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { AppError } from '../../shared/errors.js';
import { hashOut } from '../../shared/models/primitives.js';
import { findNetworkByChainId } from '../../shared/networks.js';
import { traceSchema } from '../../shared/models/trace.js';
import { toTrace } from './callTraces.js';
import { opExecutionTrace } from './opExecutionTrace.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, hashInput, networkHolding, searchedNetworkInput } from './inputs.js';

export const getUserOpTraces = defineEndpoint({
  summary: "A user operation's call frames: its execution (innerHandleOp) and everything under it, postOp included.",
  description:
    "`relevantTraces` holds the op's execution frame (the EntryPoint's innerHandleOp), its `subtraces` nested; " +
    "`traceAddress` counts from that frame. `stage` is `execution`, or `postOp` for the paymaster's postOp. Validation " +
    'frames run before execution, outside this frame, and are in getTrxTraces. An op not traced while indexing is traced ' +
    'on the node on its first request and stored. When the node cannot trace (no debug API) the answer is 200 with ' +
    '`traceStatus: "unavailable"`, no frames and a `message`; a node that fails is a 502. `sender` and `trxHash` are optional checks: an op that does not match them is a 404 naming them. An ' +
    'unknown op is a 404.',
  tag: 'User Operations',
  input: z.object({
    userOpHash: hashInput,
    network: searchedNetworkInput,
    sender: addressInput.optional().describe("Optional: the op's sender (some clients send it); checked."),
    trxHash: hashInput.optional().describe("Optional: the op's transaction (some clients send it); checked."),
  }),
  output: z.object({
    userOpHash: hashOut,
    chainId: z.number().int(),
    transactionHash: hashOut,
    relevantTraces: z.array(traceSchema),
    traceStatus: z.enum(['ok', 'unavailable']).describe("Whether the op's frames are known; `unavailable`: `relevantTraces` is empty."),
    message: z.string().nullable().describe('Why there are no frames, when `traceStatus` is `unavailable`.'),
  }),
  // Final once traced and final; an op not traced yet may be (a later pass), so that answer stays short-lived.
  cache: {
    finalWhen: ({ relevantTraces, chainId }) =>
      relevantTraces.map((root) => ({ network: findNetworkByChainId(chainId)?.name, blockNumber: root.blockNumber })),
  },
  async handler(ctx, input) {
    const network = await networkHolding(ctx, input.network, (n) => userOps.exists(ctx.db, n.chainId, input.userOpHash));
    if (!network) throw new AppError('NOT_FOUND', `No user operation ${input.userOpHash} on any indexed network`, { param: 'userOpHash' });
    const op = await userOps.findByHash(ctx.db, network.chainId, input.userOpHash);
    if (!op) throw new AppError('NOT_FOUND', `No user operation ${input.userOpHash} on ${network.name}`, { param: 'userOpHash' });
    for (const [param, sent, actual] of [
      ['trxHash', input.trxHash, op.transactionHash],
      ['sender', input.sender, op.sender],
    ] as const) {
      if (sent !== undefined && sent !== actual) {
        throw new AppError('NOT_FOUND', `User operation ${op.userOpHash} has ${param} ${actual}, not ${sent}`, { param });
      }
    }
    const [traced, tx] = await Promise.all([
      opExecutionTrace(ctx, network, op),
      bundleTransactions.findByHash(ctx.db, network.chainId, op.transactionHash),
    ]);
    const answer = { userOpHash: op.userOpHash, chainId: network.chainId, transactionHash: op.transactionHash };
    if (!traced.trace || !tx) {
      const message = traced.message ?? `The op's bundle transaction ${op.transactionHash} is not indexed.`;
      return { ...answer, relevantTraces: [], traceStatus: 'unavailable' as const, message };
    }
    const placement = { network, blockHash: tx.blockHash, blockNumber: Number(tx.blockNumber) };
    return {
      ...answer,
      relevantTraces: [toTrace(traced.trace, placement, { traceAddress: [], stage: 'execution' })],
      traceStatus: 'ok' as const,
      message: null,
    };
  },
});
