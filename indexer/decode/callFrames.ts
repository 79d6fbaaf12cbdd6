/**
 * What a `callTracer` trace tells the decoder: the handleOps calls that reached an EntryPoint
 * (for bundles sent through a wrapper or multicall, where tx.input is not handleOps), and the
 * innerHandleOp frame that executed each op (its stored trace). A frame that reverted, or sits
 * under one that did, changed nothing on chain and is skipped (blockscout's reverted-parent rule).
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import type { CallFrame } from './chainTypes.js';
import { decoderFor, type HandleOpsCall } from './entryPointDecoder.js';

/** A bundle call; `fromTxInput`: it is the transaction's own input (its ops' structAt + 4 are offsets in tx.input). */
export type TracedBundleCall = { entryPoint: string; call: HandleOpsCall; fromTxInput?: true };

/** Pre-order walk over frames that did not revert (nor any ancestor). */
function* liveFrames(frame: CallFrame): Generator<CallFrame> {
  if (frame.error) return;
  yield frame;
  for (const child of frame.calls ?? []) yield* liveFrames(child);
}

/** handleOps / handleAggregatedOps calls into known EntryPoints, in execution order. */
export function tracedBundleCalls(trace: CallFrame, entryPoints: Map<string, EntryPointVersion>): TracedBundleCall[] {
  const found: TracedBundleCall[] = [];
  for (const frame of liveFrames(trace)) {
    const to = frame.to?.toLowerCase();
    const version = to ? entryPoints.get(to) : undefined;
    if (!to || !version || frame.type !== 'CALL') continue;
    const call = decoderFor(version).decodeHandleOps(frame.input);
    if (call) found.push({ entryPoint: to, call });
  }
  return found;
}

/**
 * The innerHandleOp frame of each op, by userOpHash. A v0.7+ op whose postOp reverted has a
 * reverted innerHandleOp frame: it is still that op's execution, so reverted frames count here.
 */
export function opExecutionFrames(trace: CallFrame, entryPoints: Map<string, EntryPointVersion>): Map<string, CallFrame> {
  const frames = new Map<string, CallFrame>();
  const visit = (frame: CallFrame): void => {
    const to = frame.to?.toLowerCase();
    const version = to ? entryPoints.get(to) : undefined;
    if (version && frame.from.toLowerCase() === to) {
      try {
        const hash = decoderFor(version).innerHandleOpHash(frame.input);
        if (hash) frames.set(hash, frame);
      } catch {
        // Not the innerHandleOp layout we know (a later EntryPoint version): no trace for it.
      }
    }
    for (const child of frame.calls ?? []) visit(child);
  };
  visit(trace);
  return frames;
}
