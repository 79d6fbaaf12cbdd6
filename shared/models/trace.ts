import { z } from 'zod';
import { addressOut, hashOut, hexSchema } from './primitives.js';

/**
 * Call frames in the shape explorers render (JiffyScan's explorer web app,
 * `views/userOp/Tracer.tsx`): parity-style `type`/`action`/`result`, but `subtraces` holds the
 * child frames themselves (nested), not their count.
 */

/** Which phase of a user operation a frame belongs to; `bundle` is the transaction outside any op. */
export const traceStages = ['bundle', 'validation', 'execution', 'postOp'] as const;
export type TraceStage = (typeof traceStages)[number];

/** One decoded argument of a known method; `value` is JSON (bigints as decimal strings, addresses lower-case). */
export const decodedArgumentSchema = z.object({ name: z.string(), type: z.string(), value: z.unknown() });
export type DecodedArgument = z.infer<typeof decodedArgumentSchema>;

export type Trace = {
  type: 'call' | 'create' | 'suicide';
  action: {
    from: string;
    to: string;
    gas: string;
    input: string;
    value: string;
    callType: string;
    method?: string;
    decodedInput?: DecodedArgument[];
  };
  result: { output: string; gasUsed: string };
  /** The node's error for a frame that failed ("execution reverted", "out of gas"), else null. */
  error: string | null;
  blockHash: string;
  blockNumber: number;
  subtraces: Trace[];
  traceAddress: number[];
  stage: TraceStage;
};

export const traceSchema: z.ZodType<Trace, Trace> = z
  .lazy(() =>
    z.object({
      type: z.enum(['call', 'create', 'suicide']),
      action: z.object({
        from: addressOut,
        to: addressOut,
        gas: hexSchema,
        input: hexSchema,
        value: hexSchema,
        callType: z.string().describe('call, delegatecall, staticcall, callcode; create or create2 for creations.'),
        method: z.string().optional().describe('Name of the called method, when its selector is a known one.'),
        decodedInput: z.array(decodedArgumentSchema).optional(),
      }),
      result: z.object({ output: hexSchema, gasUsed: hexSchema }),
      error: z.string().nullable(),
      blockHash: hashOut,
      blockNumber: z.number().int(),
      subtraces: z.array(traceSchema),
      traceAddress: z.array(z.number().int()),
      stage: z.enum(traceStages),
    }),
  )
  .meta({ id: 'Trace' });
