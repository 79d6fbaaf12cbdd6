/**
 * How an op's decoded account calls are kept on its row: `calls_target` the
 * targets' 20 bytes concatenated (null: no calls), `calls_value` null when every value is zero,
 * and each call's data either in `calls_data` or, when every call's data is a slice of the op's
 * callData (what the decoders read them from), only as its place there in `calls_data_at` (per
 * call an offset and a length, uint32 big-endian each), so their bytes are not kept twice. The SQL
 * reading of the same columns is the database function opscan_op_calls.
 */
import type { AccountCall } from '../../calldata/accountCalls.js';
import { byteaArray } from '../unnest.js';

export type UserOpCall = { target: string; value: string; data: string };

/** The calls' columns as a write sends them (bytea as 0x-hex, arrays as array literals), null where not stored. */
export type StoredCalls = {
  target: string | null;
  value: string | null;
  data: string | null;
  dataAt: string | null;
};

/** The calls' columns as a read gets them (`calls_value` as text: numeric[] would be parsed as floats). */
export type StoredCallColumns = {
  calls_target: string | null;
  calls_value_text: string[] | null;
  calls_data: string[] | null;
  calls_data_at: string | null;
};

/** Hex characters of one call's place in calls_data_at (two uint32). */
const PLACE_HEX = 16;
const uint32Hex = (n: number) => n.toString(16).padStart(8, '0');

/** The byte offset of the first byte-aligned occurrence of `needle` in `haystack` (both bare hex), or null. */
function byteOffsetIn(haystack: string, needle: string): number | null {
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) if (at % 2 === 0) return at / 2;
  return null;
}

/**
 * Each call's place in `callData` (calls_data_at's hex), or null unless every call's data reads
 * back from there exactly.
 */
function placesIn(calls: readonly AccountCall[], callData: string | null): string | null {
  if (callData === null) return null;
  const haystack = callData.slice(2).toLowerCase();
  let places = '';
  for (const call of calls) {
    const data = call.data.slice(2).toLowerCase();
    // Found byte-aligned in the same hex: reading the slice back gives the data itself.
    const at = byteOffsetIn(haystack, data);
    if (at === null) return null;
    places += uint32Hex(at) + uint32Hex(data.length / 2);
  }
  return `0x${places}`;
}

/** The columns an op's calls are stored in, given its callData as decoded (the slices' source). */
export function storedCalls(calls: readonly AccountCall[], callData: string | null): StoredCalls {
  if (calls.length === 0) return { target: null, value: null, data: null, dataAt: null };
  // Every target is an address (the decoders read 20 bytes, or the sender): the count is the length / 20.
  const target = `0x${calls.map((c) => c.target.slice(2)).join('')}`;
  const value = calls.some((c) => c.value !== 0n) ? `{${calls.map((c) => c.value.toString()).join(',')}}` : null;
  const dataAt = placesIn(calls, callData);
  return { target, value, data: dataAt === null ? byteaArray(calls.map((c) => c.data)) : null, dataAt };
}

/**
 * An op's calls from its stored columns and its callData as read back (its column, or its
 * transaction's input: withInputFields). Without that callData (its transaction's row missing)
 * a call kept as a slice reads as `0x`.
 */
export function callsOfRow(row: StoredCallColumns, callData: string | null): UserOpCall[] {
  const targets = row.calls_target;
  if (targets === null) return [];
  const places = row.calls_data_at;
  const dataAt = (i: number): string => {
    if (places === null || callData === null) return '0x';
    const place = 2 + i * PLACE_HEX;
    const at = Number.parseInt(places.slice(place, place + 8), 16);
    const length = Number.parseInt(places.slice(place + 8, place + PLACE_HEX), 16);
    return `0x${callData.slice(2 + 2 * at, 2 + 2 * (at + length))}`;
  };
  return Array.from({ length: (targets.length - 2) / 40 }, (_, i) => ({
    target: `0x${targets.slice(2 + 40 * i, 42 + 40 * i)}`,
    value: row.calls_value_text?.[i] ?? '0',
    data: row.calls_data?.[i] ?? dataAt(i),
  }));
}

/** SQL of the first call's value of op `t` (null without calls), as the GraphQL `value`. */
export const firstCallValueSql = 'case when t.calls_target is not null then coalesce(t.calls_value[1], 0) end';

/**
 * SQL: the calls of op `u` (a user_ops alias) as rows (call_index, target, value, data), for a
 * lateral join: opscan_op_calls over its columns and its callData, wherever that is kept (on the row,
 * or in its bundle transaction's input at `op_at`).
 */
export const opCallsSql = (u: string): string =>
  `opscan_op_calls(coalesce(${u}.call_data, (select opscan_op_bytes(bt.input, ${u}.op_at, 3) from bundle_transactions bt
     where bt.chain_id = ${u}.chain_id and bt.tx_hash = ${u}.tx_hash)), ${u}.calls_target, ${u}.calls_value, ${u}.calls_data, ${u}.calls_data_at)`;
