/**
 * Appending rows with PostgreSQL's COPY, the bulk load path: measured here against the multi-row
 * `unnest` insert on the indexer's widest tables (5,000 rows per statement, all indexes in place),
 * COPY took 0.55–0.65× the time (user_ops 107–135 µs/row vs 195–340, logs 34–48 vs 53–115). COPY
 * has no `on conflict`: it is for rows never written before (persistBatch falls back to the
 * conflict-tolerant inserts when a range is written again). PGlite's COPY reads files only, so
 * there the same rows go in as one multi-row insert.
 */
import type { Queryable } from './client.js';
import { unnestInsert, type Column } from './unnest.js';

/** A value in COPY's text format: `\N` for null, t/f, and backslash escapes for the four special characters. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const text = typeof value === 'string' ? value : typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
  // Four indexOf scans (memchr) rather than one regex: 20× faster on the long hex most values are.
  return text.indexOf('\\') < 0 && text.indexOf('\t') < 0 && text.indexOf('\n') < 0 && text.indexOf('\r') < 0
    ? text
    : text.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
}

/** COPY input is sent in chunks of about this many bytes: few socket writes, no whole-batch buffer. */
const CHUNK_BYTES = 1 << 20;
const TAB = 9;
const NEWLINE = 10;

/**
 * Appends `rows` to `table`. Each column's value is sent as the text its type reads (a column's
 * `convert` must be the cast COPY's text input does by itself, e.g. `v::jsonb`). Fails on a
 * duplicate key, like COPY.
 */
export async function copyRows<TRow>(
  db: Queryable,
  table: string,
  columns: ReadonlyArray<Column<TRow>>,
  { rows, chainId }: { rows: readonly TRow[]; chainId: number },
): Promise<void> {
  if (rows.length === 0) return;
  if (!db.copyFrom) {
    const { text, values } = unnestInsert(table, columns, { rows, chainId });
    await db.query(text, values);
    return;
  }
  const values = columns.map(([, , value]) => value);
  const isBytea = columns.map(([, type]) => type === 'bytea');
  const last = values.length - 1;
  // Each value is encoded straight into the chunk's buffer: joining strings and encoding the result
  // took twice as long and made twice the garbage. A chunk is never written to again once yielded.
  const chunks = function* (): Generator<Buffer> {
    let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let at = 0;
    for (const row of rows) {
      for (let i = 0; i <= last; i++) {
        const value = values[i]!(row, chainId);
        // bytea's text input `\x…`, its backslash escaped for COPY: written as is, no scan of the hex.
        const text = isBytea[i] && typeof value === 'string' ? `\\\\x${value.slice(2)}` : copyText(value);
        // UTF-8 takes at most 3 bytes per UTF-16 unit; +1 for the separator.
        const room = text.length * 3 + 1;
        if (at + room > chunk.length) {
          if (at > 0) yield chunk.subarray(0, at);
          chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, room));
          at = 0;
        }
        at += chunk.write(text, at);
        chunk[at++] = i === last ? NEWLINE : TAB;
      }
    }
    if (at > 0) yield chunk.subarray(0, at);
  };
  await db.copyFrom(`copy ${table} (${columns.map(([name]) => name).join(', ')}) from stdin`, chunks());
}
