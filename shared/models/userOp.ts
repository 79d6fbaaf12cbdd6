import { z } from 'zod';
import { addressOut, decimalString, hashOut, hexSchema } from './primitives.js';

/** `{factory}` metadata of the sender or target account (spec: accountSender / accountTarget). */
export const accountMetaSchema = z.object({ factory: addressOut.nullable() });

/**
 * The spec's UserOp. Every spec field keeps its name, type and nullability; fields real clients
 * also read (JiffyScan's explorer web app and SDK) are added beside them, never in their place.
 */
export const userOpSchema = z
  .object({
    userOpHash: hashOut,
    transactionHash: hashOut,
    sender: addressOut,
    target: addressOut.nullable(),
    accountSender: accountMetaSchema.nullable(),
    accountTarget: accountMetaSchema.nullable(),
    paymaster: addressOut,
    nonce: decimalString,
    actualGasCost: decimalString.nullable(),
    actualGasUsed: decimalString.nullable(),
    success: z.boolean(),
    revertReason: hexSchema.nullable(),
    blockTime: decimalString,
    blockNumber: decimalString,
    network: z.string(),
    input: hexSchema,
    callData: hexSchema,
    beneficiary: addressOut.nullable(),
    factory: z.string().nullable(),
    value: decimalString.nullable(),
    verificationGasLimit: decimalString.nullable(),
    preVerificationGas: decimalString.nullable(),
    maxFeePerGas: decimalString.nullable(),
    maxPriorityFeePerGas: decimalString.nullable(),
    paymasterAndData: hexSchema.nullable(),
    signature: hexSchema.nullable(),
    id: z.string(),
    // Present in the spec's sample bodies though not in its declared schema.
    gasPrice: decimalString.nullable(),
    gasLimit: decimalString.nullable(),
    callGasLimit: decimalString.nullable(),
    baseFeePerGas: decimalString.nullable(),
    // Read by real clients (contract.md §3.8 / §4.4).
    status: z.enum(['SUCCESS', 'FAILED']),
    entryPoint: addressOut,
    entryPointVersion: z.string(),
    initCode: hexSchema.nullable(),
    accountGasLimits: hexSchema.nullable(),
    gasFees: hexSchema.nullable(),
    preDecodedCallData: hexSchema,
    paymasterRevertReason: hexSchema.nullable(),
    revertMessage: z.string().nullable(),
    bundler: addressOut,
    chainId: z.number().int(),
    bundleIndex: z.number().int(),
    logIndex: z.number().int(),
    /** Every decoded call of the op (execute / executeBatch / ERC-7579); `target` is the first. */
    targets: z.array(addressOut),
    values: z.array(decimalString),
    callDatas: z.array(hexSchema),
    /** The sender is an EOA running delegated account code (EIP-7702). */
    eip7702: z.boolean(),
    /** EntryPoint v0.9: the paymaster's signature at the end of paymasterAndData (not covered by userOpHash). */
    paymasterSignature: hexSchema.nullable(),
    /**
     * The implementation the sender runs, named from the chain ("Kernel v3.1", "Safe 1.4.1 +
     * Safe4337Module 0.3.0", …; shared/accountImplementations.ts), "unknown" when it is none opscan
     * knows, null while the indexer has not looked at the account yet.
     */
    implementation: z.string().nullable(),
  })
  .meta({ id: 'UserOp' });
export type UserOp = z.infer<typeof userOpSchema>;

/** A getBundlerActivity item (spec: BundlerDetails.userOps[]). */
export const bundlerUserOpSchema = userOpSchema
  .pick({
    id: true,
    sender: true,
    target: true,
    actualGasCost: true,
    success: true,
    revertReason: true,
    blockTime: true,
    paymaster: true,
    network: true,
    userOpHash: true,
    input: true,
    nonce: true,
    value: true,
    callData: true,
  })
  .meta({ id: 'BundlerUserOp' });
