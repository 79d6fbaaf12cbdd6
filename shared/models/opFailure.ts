import { z } from 'zod';
import { addressOut, hexSchema } from './primitives.js';
import { decodedArgumentSchema } from './trace.js';

/**
 * Why a user operation failed, as getUserOp, getUserOpMetadata and GraphQL answer it (null for an op
 * that succeeded). Decoded from the revert data the EntryPoint emitted (UserOperationRevertReason,
 * PostOpRevertReason) with the ABIs opscan ships; the frame from the op's stored call trace.
 */
export const opFailureFrameSchema = z
  .object({
    to: addressOut,
    /** The first four bytes of the frame's input (null: a plain transfer). */
    selector: hexSchema.nullable(),
    /** The method's name where opscan knows the selector. */
    method: z.string().nullable(),
    /** Calls below the EntryPoint's innerHandleOp: 1 is its call to the account (or, in postOp, the paymaster). */
    depth: z.number().int(),
    /** The node's word for the frame's failure ("execution reverted", "out of gas"). */
    error: z.string().nullable(),
  })
  .meta({ id: 'OpFailureFrame' });

export const opFailureSchema = z
  .object({
    /** `execution`: the account's call reverted; `postOp`: the paymaster's postOp did (or the prefund fell short). */
    stage: z.enum(['execution', 'postOp']),
    /** `Error`: require/revert with a message; `Panic`: a compiler check; `custom`: a known custom error; `empty`: no data; `unknown`: a selector opscan does not know. */
    kind: z.enum(['Error', 'Panic', 'custom', 'empty', 'unknown']),
    name: z.string().nullable(),
    message: z.string().nullable(),
    selector: hexSchema.nullable(),
    args: z.array(decodedArgumentSchema).nullable(),
    /** The innermost error's own bytes (all of the revert data when nothing wraps it). */
    data: hexSchema,
    /** The errors around it that carried it as bytes, outermost first (their other arguments kept). */
    wrappers: z.array(z.object({ name: z.string(), selector: hexSchema, args: z.array(decodedArgumentSchema) })),
    /** The call that raised it, from the stored trace; null when the op has no stored trace. */
    frame: opFailureFrameSchema.nullable(),
  })
  .meta({ id: 'OpFailure' });
export type OpFailure = z.infer<typeof opFailureSchema>;
export type OpFailureFrame = z.infer<typeof opFailureFrameSchema>;
