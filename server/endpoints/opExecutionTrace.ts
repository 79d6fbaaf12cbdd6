import type { NetworkConfig } from '../../shared/config.js';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import type { CallFrame } from '../../shared/db/tables/userOpTraces.js';
import { AppError } from '../../shared/errors.js';
import type { Ctx } from '../context.js';
import { decodeCall } from '../knownCalls.js';

/**
 * An op's execution trace (the EntryPoint's innerHandleOp frame and everything under it), for
 * getUserOpMetadata and getUserOpTraces. The indexer stores it only for the bundles it had to
 * trace anyway (INDEXER_TRACES=needed, the default): any other op is traced here on its first
 * request (debug_traceTransaction of its bundle transaction) and the frames of every op of that
 * transaction are stored, so later answers come from the store without asking the node.
 */

export type OpExecutionTrace = { trace: CallFrame; message: null } | { trace: null; message: string };

/**
 * The innerHandleOp frame of each op in a transaction's trace, by userOpHash: the EntryPoint's
 * call to itself that executes one op (a reverted one too: a v0.7+ op whose postOp reverted).
 */
function opExecutionFrames(root: CallFrame, entryPoints: Set<string>): Map<string, CallFrame> {
  const frames = new Map<string, CallFrame>();
  const visit = (frame: CallFrame): void => {
    const to = frame.to?.toLowerCase();
    if (to && entryPoints.has(to) && frame.from?.toLowerCase() === to) {
      const call = decodeCall(frame.input ?? '0x');
      const opInfo = call?.method === 'innerHandleOp' ? call.decodedInput.find((a) => a.name === 'opInfo')?.value : undefined;
      const hash = (opInfo as { userOpHash?: unknown } | undefined)?.userOpHash;
      if (typeof hash === 'string') frames.set(hash.toLowerCase(), frame);
    }
    for (const child of frame.calls ?? []) visit(child);
  };
  visit(root);
  return frames;
}

/**
 * The stored trace, else the node's. A node without a debug API (or no RPC URL) is an answer —
 * no trace, and a message saying why; a node that fails throws the chain reader's 502.
 */
export async function opExecutionTrace(
  ctx: Pick<Ctx, 'db' | 'primary' | 'services'>,
  network: NetworkConfig,
  op: { userOpHash: string; transactionHash: string },
): Promise<OpExecutionTrace> {
  const stored = await userOpTraces.find(ctx.db, network.chainId, op.userOpHash);
  if (stored?.status === 'ok' && stored.trace) return { trace: stored.trace, message: null };
  if (network.rpcUrls.length === 0) {
    return { trace: null, message: `No RPC URL is configured for ${network.name}: the op's execution trace cannot be read from a node.` };
  }
  let frame: CallFrame;
  try {
    frame = await ctx.services.chain.traceTransaction(network, op.transactionHash);
  } catch (err) {
    if (err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE') return { trace: null, message: err.message };
    throw err;
  }
  const frames = opExecutionFrames(frame, new Set(network.entryPoints.map((e) => e.address)));
  // A write: through the primary, whichever database served the reads.
  await userOpTraces.storeTraced(
    ctx.primary,
    network.chainId,
    [...frames].map(([userOpHash, trace]) => ({ userOpHash, trace })),
  );
  const own = frames.get(op.userOpHash);
  if (own) return { trace: own, message: null };
  return { trace: null, message: `The trace of transaction ${op.transactionHash} holds no execution frame for this op.` };
}
