import type { NetworkConfig } from '../../shared/config.js';
import type { CallFrame } from '../../shared/db/tables/userOpTraces.js';
import type { Trace, TraceStage } from '../../shared/models/trace.js';
import { decodeCall } from '../knownCalls.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

/** Builds the explorer's Trace tree (shared/models/trace.ts) from a callTracer frame (pure). */

/**
 * The EntryPoint calls that begin a phase of an op: the frame and everything under it belong to
 * that phase. A frame outside them inherits its parent's stage; the transaction itself is `bundle`.
 */
const STAGE_BEGUN_BY: Readonly<Record<string, TraceStage>> = {
  createSender: 'validation',
  validateUserOp: 'validation',
  validatePaymasterUserOp: 'validation',
  innerHandleOp: 'execution',
  postOp: 'postOp',
};

export type TracePlacement = {
  network: NetworkConfig;
  blockHash: string;
  blockNumber: number;
};

const hex = (value: string | undefined, fallback: string): string => (value ?? fallback).toLowerCase();

/** callTracer's frame type → parity's `type` and `callType`. */
function kindOf(frameType: string | undefined): Pick<Trace, 'type'> & { callType: string } {
  const callType = (frameType ?? 'CALL').toLowerCase();
  if (callType === 'create' || callType === 'create2') return { type: 'create', callType };
  if (callType === 'selfdestruct') return { type: 'suicide', callType };
  return { type: 'call', callType };
}

/**
 * `frame` and its descendants as Trace nodes. `traceAddress` is the frame's path of child indexes
 * from the root given here; `stage` the stage of its caller (the root of a transaction: `bundle`).
 */
export function toTrace(frame: CallFrame, placement: TracePlacement, at: { traceAddress: number[]; stage: TraceStage }): Trace {
  const input = hex(frame.input, '0x');
  const from = hex(frame.from, ZERO_ADDRESS);
  const decoded = decodeCall(input);
  const calledByEntryPoint = placement.network.entryPoints.some((e) => e.address === from);
  const stage = (calledByEntryPoint && decoded && STAGE_BEGUN_BY[decoded.method]) || at.stage;
  const { type, callType } = kindOf(frame.type);
  return {
    type,
    action: {
      from,
      to: hex(frame.to, ZERO_ADDRESS),
      gas: hex(frame.gas, '0x0'),
      input,
      value: hex(frame.value, '0x0'),
      callType,
      ...(decoded ?? {}),
    },
    result: { output: hex(frame.output, '0x'), gasUsed: hex(frame.gasUsed, '0x0') },
    error: frame.error ?? null,
    blockHash: placement.blockHash,
    blockNumber: placement.blockNumber,
    subtraces: (frame.calls ?? []).map((child, i) => toTrace(child, placement, { traceAddress: [...at.traceAddress, i], stage })),
    traceAddress: at.traceAddress,
    stage,
  };
}
