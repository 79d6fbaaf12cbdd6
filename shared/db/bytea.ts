/**
 * How bytes cross between opscan and the database. Bytes (addresses, hashes, calldata, signatures,
 * log topics and data) are stored as `bytea`, half the size of their hex text, and are hex only at
 * the edges. The one convention, for both drivers:
 *   - reads: a bytea column comes back as the lower-case `0x…` string the answers carry (the parsers
 *     below, which postgresDb.ts registers for OID 17 and, for bytea[], 1001, and pgliteDb.ts gives
 *     PGlite), so row mappers and JSON answers see hex strings;
 *   - writes and filters: a parameter bound to a bytea column is passed as `bytea(hex)` (`\x…`, the
 *     type's own text input, case-insensitive); the multi-row helpers do it for columns typed
 *     'bytea' (unnest.ts, copy.ts). A `0x…` string bound to bytea would be read as its ASCII
 *     characters (bytea's escape input): PGlite refuses one outright (pgliteDb.ts's serializer);
 *   - SQL that builds JSON or text from a bytea column writes `'0x' || encode(col, 'hex')`.
 * bytea compares byte-wise, so ordering by a hash is the order of its lower-case hex.
 */
export function bytea(hex: string): string;
export function bytea(hex: string | null | undefined): string | null;
export function bytea(hex: string | null | undefined): string | null {
  return hex === null || hex === undefined ? null : `\\x${hex.slice(2)}`;
}

/** `\x0102` (bytea's text output) → `0x0102`. */
export const hexOfBytea = (value: string): string => `0x${value.slice(2)}`;

/** `{"\\x01","\\x02",NULL}` (bytea[]'s text output) → ['0x01', '0x02', null]. */
export function hexesOfByteaArray(value: string): Array<string | null> {
  if (value === '{}') return [];
  return value
    .slice(1, -1)
    .split(',')
    .map((element) => (element === 'NULL' ? null : `0x${element.replace(/^"?\\+x/, '').replace(/"$/, '')}`));
}
