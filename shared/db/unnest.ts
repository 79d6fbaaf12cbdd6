import { bytea } from './client.js';

/**
 * Multi-row writes as one statement: each column travels as one typed array parameter and
 * `unnest` turns the arrays back into rows (`insert … select … from unnest($1::text[], …)`), so a
 * batch of any size is one round trip with a fixed, parameterised SQL text.
 */

/**
 * A column: its name, the SQL element type of its array parameter, how a row (of network
 * `chainId`, passed beside the rows rather than copied into each) supplies it (for a 'bytea'
 * column, its `0x…` hex: the helpers send it as bytea's text, shared/db/bytea.ts), and
 * optionally the cast that makes the unnested text `v` the stored type (`v::jsonb`, or `v::text[]`
 * from an array literal, since unnest flattens nested arrays). Only a cast: COPY (copy.ts) sends
 * the same text and lets the column's input function do it.
 */
export type Column<TRow> = readonly [
  name: string,
  sqlType: string,
  value: (row: TRow, chainId: number) => unknown,
  convert?: (v: string) => string,
];

/**
 * A bytea[] column's value as an array literal of bytea's text input (`{\\x…,…}`, each backslash
 * escaped for the literal): unnest flattens nested arrays, so such a column travels as text with a
 * `::bytea[]` cast, and COPY reads the same literal.
 */
export const byteaArray = (hexes: readonly string[]): string => `{${hexes.map((hex) => `\\\\x${hex.slice(2)}`).join(',')}}`;

/** bigint → decimal string (numeric), null kept; what every uint256 column is sent as. */
export const numeric = (v: bigint | null | undefined): string | null => (v === null || v === undefined ? null : v.toString());

/**
 * `insert into <table> (<columns>) select … from unnest(...) <tail>` and its parameters.
 * `tail` is the conflict / returning clause, e.g. `on conflict do nothing returning user_op_hash`.
 */
export function unnestInsert<TRow>(
  table: string,
  columns: ReadonlyArray<Column<TRow>>,
  { rows, chainId }: { rows: readonly TRow[]; chainId: number },
  tail = '',
): { text: string; values: unknown[] } {
  const names = columns.map(([name]) => name).join(', ');
  const arrays = columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  const aliases = columns.map((_, i) => `c${i}`).join(', ');
  const selects = columns.map(([, , , convert], i) => (convert ? convert(`u.c${i}`) : `u.c${i}`)).join(', ');
  return {
    text: `insert into ${table} (${names}) select ${selects} from unnest(${arrays}) as u(${aliases}) ${tail}`,
    values: columns.map((column) => columnArray(column, { rows, chainId })),
  };
}

/** The array parameter of one column for `rows` (a 'bytea' column's hex sent as bytea's text). */
export function columnArray<TRow>([, type, value]: Column<TRow>, { rows, chainId }: { rows: readonly TRow[]; chainId: number }): unknown[] {
  return type === 'bytea' ? rows.map((row) => bytea(value(row, chainId) as string | null)) : rows.map((row) => value(row, chainId));
}
