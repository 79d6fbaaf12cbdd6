/**
 * Where an op's own bytes sit in its struct, per EntryPoint family: the indexer reads them from a
 * handleOps call with it, and the reads of a stored op read them back with it from the bundle
 * transaction's input (an op decoded from that input is stored with `op_at`, the absolute byte
 * offset of its struct there, and without these columns, so its bytes are kept once). The same head
 * slots are in the database functions opscan_op_bytes / opscan_op_word and in userOpView.
 */
import { HexReader } from './hexAbi.js';

/** Head slots (32-byte words from the struct's start) of the fields stored only in the input. */
export const OP_FIELD_SLOTS = {
  /** v0.6 UserOperation: sender, nonce, initCode, callData, 5 gas words, paymasterAndData, signature. */
  v06: { initCode: 2, callData: 3, paymasterAndData: 9, signature: 10 },
  /** v0.7+ PackedUserOperation: sender, nonce, initCode, callData, accountGasLimits, preVerificationGas, gasFees, paymasterAndData, signature. */
  packed: { initCode: 2, callData: 3, accountGasLimits: 4, gasFees: 6, paymasterAndData: 7, signature: 8 },
} as const;

/** The op's fields kept in the input (the v0.7+ packed gas words are null for v0.6). */
export type OpInputFields = {
  initCode: string;
  callData: string;
  paymasterAndData: string;
  signature: string;
  accountGasLimits: string | null;
  gasFees: string | null;
};

/** The fields of the struct at byte `p` of `r` (dynamic offsets relative to `p`, as the ABI has them). */
export function readOpInputFields(r: HexReader, p: number, v06: boolean): OpInputFields {
  const slots = v06 ? OP_FIELD_SLOTS.v06 : OP_FIELD_SLOTS.packed;
  const bytesIn = (slot: number) => r.bytes(p, p + 32 * slot);
  const wordIn = (slot: number | undefined) => (slot === undefined ? null : r.bytes32(p + 32 * slot));
  return {
    initCode: bytesIn(slots.initCode),
    callData: bytesIn(slots.callData),
    paymasterAndData: bytesIn(slots.paymasterAndData),
    signature: bytesIn(slots.signature),
    accountGasLimits: wordIn('accountGasLimits' in slots ? slots.accountGasLimits : undefined),
    gasFees: wordIn('gasFees' in slots ? slots.gasFees : undefined),
  };
}

/**
 * The fields of the op whose struct starts at byte `opAt` of a transaction's whole input (selector
 * included). `input` is lower-case 0x-hex, as stored inputs read (shared/db/bytea.ts): not lowered
 * again, which cost ~60 µs per op on a 20-op bundle's input, more than the slicing itself.
 */
export function opInputFieldsAt(input: string, opAt: number, entryPointVersion: string): OpInputFields {
  return readOpInputFields(new HexReader(input.slice(2)), opAt, entryPointVersion === 'v0.6');
}
