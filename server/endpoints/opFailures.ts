import type { NetworkConfig } from '../../shared/config.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import type { OpFailure } from '../../shared/models/opFailure.js';
import type { Ctx } from '../context.js';
import { diagnoseFailure } from '../opFailure.js';
import { opExecutionTrace } from './opExecutionTrace.js';

/**
 * `failure` of getUserOp and getUserOpMetadata: for a failed op, its diagnosis (server/opFailure.ts)
 * over its execution trace — the stored one, else the node's on this first request (then stored, as
 * getUserOpMetadata does). A node that cannot trace leaves `frame` null; the rest stands.
 */
export async function opFailure(
  ctx: Pick<Ctx, 'db' | 'primary' | 'services' | 'log'>,
  network: NetworkConfig,
  op: { userOpHash: string; transactionHash: string; success: boolean },
): Promise<OpFailure | null> {
  if (op.success) return null;
  const stored = (await userOps.listFailures(ctx.db, network.chainId, [op.userOpHash])).get(op.userOpHash);
  if (!stored) return null;
  const traced = await opExecutionTrace(ctx, network, op).catch((err: unknown) => {
    ctx.log.warn({ err, userOpHash: op.userOpHash }, 'tracing the failed op failed');
    return { trace: null };
  });
  return diagnoseFailure(stored, traced.trace);
}
