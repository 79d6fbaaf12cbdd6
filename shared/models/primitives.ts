import { z } from 'zod';

/**
 * Wire primitives of the /v0 API. Addresses and hashes are answered in lower case; quantities are
 * decimal strings (exact for uint256); inputs accept any case and are normalised here.
 */
/** Hex digits of an address (20 bytes), e.g. in a run of addresses' bytes read as one hex value. */
export const ADDRESS_HEX_DIGITS = 40;

export const addressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .transform((s) => s.toLowerCase());

export const hashSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex hash')
  .transform((s) => s.toLowerCase());

/** Lower-case 0x hex of any length (answers). */
export const hexSchema = z.string().regex(/^0x[0-9a-f]*$/);
/** An address as answered (lower case). */
export const addressOut = z.string().regex(/^0x[0-9a-f]{40}$/);
/** A hash as answered (lower case). */
export const hashOut = z.string().regex(/^0x[0-9a-f]{64}$/);
/** A non-negative integer as a decimal string. */
export const decimalString = z.string().regex(/^\d+$/);
/** An integer that may be negative (a profit), as a decimal string. */
export const signedDecimalString = z.string().regex(/^-?\d+$/);
