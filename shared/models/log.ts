import { z } from 'zod';
import { addressOut, decimalString, hashOut, hexSchema } from './primitives.js';
import { opFailureSchema } from './opFailure.js';

export const logSchema = z
  .object({
    logIndex: decimalString,
    transactionHash: hashOut,
    transactionLogIndex: decimalString,
    topics: z.array(hexSchema),
    removed: z.boolean(),
    data: hexSchema,
    address: addressOut,
    // Read by real clients (contract.md §3.10): the decoded event, when its ABI is known.
    event_name: z.string().nullable(),
    eventName: z.string().nullable(),
    blockNumber: decimalString,
    userOpHash: hashOut.nullable(),
  })
  .meta({ id: 'Log' });
export type Log = z.infer<typeof logSchema>;

/** A node of an op's execution trace: one call frame and the frames it made. */
export type TraceNode = {
  traceData: {
    from: string;
    to: string;
    input: string;
    type: string;
    gas: string;
    gasUsed: string;
    output: string;
    value?: string;
    executionCall?: boolean;
  };
  next: TraceNode[];
};

/** One call frame of an execution trace. */
export const traceDataSchema = z.object({
  from: addressOut,
  to: addressOut,
  input: hexSchema,
  type: z.string(),
  gas: hexSchema,
  gasUsed: hexSchema,
  output: hexSchema,
  value: hexSchema.optional(),
  executionCall: z.boolean().optional(),
});

export const traceNodeSchema: z.ZodType<TraceNode, TraceNode> = z
  .lazy(() =>
    z.object({
      traceData: traceDataSchema,
      next: z.array(traceNodeSchema),
    }),
  )
  .meta({ id: 'TraceNode' });

/** Numeric `userOpParams` items are ethers-v5-style BigNumber objects, as clients parse them. */
const bigNumberSchema = z.object({ type: z.literal('BigNumber'), hex: hexSchema });

export const userOpMetadataSchema = z
  .object({
    /** Why the op failed (null when it succeeded), as getUserOp answers it. */
    failure: opFailureSchema.nullable(),
    erc20Transfers: z.array(z.object({ invoked: z.string(), from: addressOut, to: addressOut, value: hexSchema, name: z.string() })),
    /** Null when the node could not trace the transaction (no debug_traceTransaction). */
    executionTrace: traceNodeSchema.nullable(),
    /**
     * The op's fields by position, as clients index them (contract.md §3.9): v0.6
     * [sender, nonce, initCode, callData, callGasLimit, verificationGasLimit, preVerificationGas,
     * maxFeePerGas, maxPriorityFeePerGas, paymasterAndData, signature]; v0.7+ (packed)
     * [sender, nonce, initCode, callData, accountGasLimits, preVerificationGas, gasFees,
     * paymasterAndData, signature].
     */
    userOpParams: z.array(z.union([z.string(), bigNumberSchema])),
    logs: z.array(
      z.object({
        name: z.string(),
        anonymous: z.boolean(),
        inputs: z.array(z.object({ value: z.union([z.string(), z.boolean()]), type: z.string(), name: z.string() })).nullable(),
        raw: z.object({ address: addressOut, topics: z.array(hexSchema), data: hexSchema }),
      }),
    ),
  })
  .meta({ id: 'UserOpMetadata' });
export type UserOpMetadata = z.infer<typeof userOpMetadataSchema>;
