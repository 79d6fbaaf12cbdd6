import { z } from 'zod';
import * as logs from '../../shared/db/tables/logs.js';
import * as tokenTransfers from '../../shared/db/tables/tokenTransfers.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { AppError } from '../../shared/errors.js';
import { userOpMetadataSchema } from '../../shared/models/index.js';
import { decodeLog } from '../knownEvents.js';
import { diagnoseFailure } from '../opFailure.js';
import { defineEndpoint } from './defineEndpoint.js';
import { opExecutionTrace } from './opExecutionTrace.js';
import { hashInput, networkHolding, searchedNetworkInput } from './inputs.js';
import { toTraceNode, userOpParamsOf } from './userOpMetadata.js';

export const getUserOpMetadata = defineEndpoint({
  summary: "A user operation's ERC-20 transfers, execution trace, parameters by position and decoded logs.",
  description:
    '`userOpParams` positions: v0.6 [sender, nonce, initCode, callData, callGasLimit, verificationGasLimit, ' +
    'preVerificationGas, maxFeePerGas, maxPriorityFeePerGas, paymasterAndData, signature]; v0.7+ [sender, nonce, ' +
    'initCode, callData, accountGasLimits, preVerificationGas, gasFees, paymasterAndData, signature]; numbers are ' +
    '`{type: "BigNumber", hex}`. `executionTrace`: an op not traced while indexing is traced on the node on its first ' +
    'request and stored; null when the node cannot trace the transaction (getUserOpTraces says why). ' +
    '`failure`: why a failed op failed (null when it succeeded), as getUserOp answers it. An unknown user operation is a 404.',
  tag: 'User Operations',
  input: z.object({ userOpHash: hashInput, network: searchedNetworkInput }),
  output: userOpMetadataSchema,
  // The trace may be stored after the op (a first request, a repair): kept like head data, never as final.
  cache: 'head',
  async handler(ctx, input) {
    const network = await networkHolding(ctx, input.network, (n) => userOps.exists(ctx.db, n.chainId, input.userOpHash));
    if (!network) throw new AppError('NOT_FOUND', `No user operation ${input.userOpHash} on any indexed network`, { param: 'userOpHash' });
    const op = await userOps.findByHash(ctx.db, network.chainId, input.userOpHash);
    if (!op) throw new AppError('NOT_FOUND', `No user operation ${input.userOpHash} on ${network.name}`, { param: 'userOpHash' });
    const [transfers, traced, opLogs] = await Promise.all([
      tokenTransfers.listByUserOp(ctx.db, network.chainId, op),
      // The rest of the answer stands without the trace: a failing node leaves it null (getUserOpTraces says why).
      opExecutionTrace(ctx, network, op).catch((err: unknown) => {
        ctx.log.warn({ err, userOpHash: op.userOpHash }, 'tracing the op failed');
        return { trace: null };
      }),
      logs.listByUserOp(ctx.db, network.chainId, op.userOpHash),
    ]);
    const stored = op.success ? undefined : (await userOps.listFailures(ctx.db, network.chainId, [op.userOpHash])).get(op.userOpHash);
    return {
      failure: stored ? diagnoseFailure(stored, traced.trace) : null,
      erc20Transfers: transfers
        .filter((t) => t.standard === 'ERC20')
        .map((t) => ({
          invoked: t.token,
          from: t.from,
          to: t.to,
          value: `0x${BigInt(t.value).toString(16)}`,
          name: t.name ?? '',
        })),
      executionTrace: traced.trace ? toTraceNode(traced.trace) : null,
      userOpParams: userOpParamsOf(op),
      logs: opLogs.map((log) => {
        const decoded = decodeLog(log);
        return {
          name: decoded?.name ?? '',
          anonymous: false,
          inputs: decoded?.inputs.map(({ name, type, value }) => ({ name, type, value })) ?? null,
          raw: { address: log.address, topics: log.topics, data: log.data },
        };
      }),
    };
  },
});
