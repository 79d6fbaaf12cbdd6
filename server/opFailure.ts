import type { CallFrame } from '../shared/db/tables/userOpTraces.js';
import type { OpFailure, OpFailureFrame } from '../shared/models/opFailure.js';
import { decodeCall } from './knownCalls.js';
import { decodeRevert } from './knownErrors.js';

/**
 * Why an op failed, from what opscan stores: the stage the EntryPoint reported (its revert event),
 * the revert data decoded (knownErrors.ts), and the call that raised it, found in the op's stored
 * execution trace (the innerHandleOp frame) by following the revert data down the failed calls.
 */

/** An op's failure as stored: the EntryPoint's verdict and the revert data of its event. */
export type StoredFailure = { failure: string | null; revertReason: string | null };

const hexOf = (value: string | undefined): string => (value ?? '0x').toLowerCase();

/**
 * Whether a failed call's output is what its caller reverted with: the same bytes, the start of
 * them (the EntryPoint cuts reasons at 2048 bytes), or carried inside them (a wrapping error).
 */
function carries(callerData: string, output: string): boolean {
  if (output === '0x') return callerData === '0x';
  return output === callerData || output.startsWith(callerData) || callerData.includes(output.slice(2));
}

/**
 * The call that raised `revertData` under `root` (depth 0), or null when no failed call below it
 * carries that data. From each frame, the last failed child whose output its revert data carries is
 * followed; a frame none of whose failed children does raised the error itself.
 */
export function failingFrame(root: CallFrame, revertData: string | null): { frame: CallFrame; depth: number } | null {
  let current = root;
  let depth = 0;
  let data = (revertData ?? '0x').toLowerCase();
  for (;;) {
    const next = (current.calls ?? []).findLast((c) => c.error !== undefined && carries(data, hexOf(c.output)));
    if (!next) return depth === 0 ? null : { frame: current, depth };
    current = next;
    depth += 1;
    data = hexOf(next.output);
  }
}

function frameOf(frame: CallFrame, depth: number): OpFailureFrame {
  const input = hexOf(frame.input);
  return {
    to: hexOf(frame.to),
    selector: input.length >= 10 ? input.slice(0, 10) : null,
    method: decodeCall(input)?.method ?? null,
    depth,
    error: frame.error ?? null,
  };
}

/**
 * v0.6 emits no event when a paymaster's postOp reverts: the op is failed with no revert data. Its
 * trace shows it: the innerHandleOp frame itself reverted, under a failed postOp call.
 */
function postOpInTrace(trace: CallFrame): boolean {
  if (trace.error === undefined) return false;
  const failed = (trace.calls ?? []).findLast((c) => c.error !== undefined);
  return failed !== undefined && decodeCall(hexOf(failed.input))?.method === 'postOp';
}

/** The op's failure, or null when it succeeded; `trace` is its stored execution trace, if any. */
export function diagnoseFailure(op: StoredFailure, trace: CallFrame | null): OpFailure | null {
  if (op.failure === null) return null;
  if (op.failure === 'prefund_too_low') {
    // The EntryPoint's UserOperationPrefundTooLow: gas accounting after postOp, no revert data.
    return {
      stage: 'postOp',
      kind: 'empty',
      name: 'UserOperationPrefundTooLow',
      message: "the op's prefund did not cover its gas cost",
      selector: null,
      args: null,
      data: '0x',
      wrappers: [],
      frame: null,
    };
  }
  const decoded = decodeRevert(op.revertReason);
  const found = trace ? failingFrame(trace, op.revertReason) : null;
  const stage =
    op.failure === 'postop_reverted' || (op.revertReason === null && trace !== null && postOpInTrace(trace)) ? 'postOp' : 'execution';
  return {
    stage,
    kind: decoded.kind,
    name: decoded.name,
    message: decoded.message,
    selector: decoded.selector,
    args: decoded.args,
    data: decoded.data,
    wrappers: decoded.wrappers,
    frame: found ? frameOf(found.frame, found.depth) : null,
  };
}

/** The failure in words, as the status page shows it ("Panic: arithmetic overflow in transfer() at depth 2"). */
export function failureInWords(f: OpFailure): string {
  const what =
    f.kind === 'empty'
      ? (f.name ?? 'reverted with no data')
      : f.kind === 'unknown'
        ? `unknown error ${f.selector ?? f.data}`
        : f.kind === 'custom'
          ? (f.message ?? f.name!)
          : `${f.name}: ${f.message}`;
  const around = f.wrappers.length > 0 ? ` (inside ${f.wrappers.map((w) => w.name).join(' › ')})` : '';
  const where = f.frame ? ` in ${f.frame.method ? `${f.frame.method}()` : (f.frame.selector ?? 'a call')} at depth ${f.frame.depth}` : '';
  return `${f.stage === 'postOp' ? 'postOp: ' : ''}${what}${around}${where}`;
}
