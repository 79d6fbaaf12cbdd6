import { expect } from 'chai';
import { copyRows } from '../../../shared/db/copy.js';
import { unnestInsert, type Column } from '../../../shared/db/unnest.js';
import { useTestDb } from '../../helpers/db.js';

/**
 * copyRows writes what the unnest insert writes, for every kind of value the indexer stores: text
 * that needs COPY's escapes (tab, newline, carriage return, backslash — a revert message is any
 * text), nulls, booleans, numerics beyond 64 bits, arrays and JSON. On PostgreSQL it is COPY; on
 * PGlite (no TEST_DATABASE_URL) the multi-row insert it falls back to.
 */
type Row = { id: number; text: string | null; flag: boolean; amount: string; topics: string; payload: string | null };

const COLUMNS: ReadonlyArray<Column<Row>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['id', 'integer', (r) => r.id],
  ['text', 'text', (r) => r.text],
  ['flag', 'boolean', (r) => r.flag],
  ['amount', 'numeric', (r) => r.amount],
  ['topics', 'text', (r) => r.topics, (v) => `${v}::text[]`],
  ['payload', 'text', (r) => r.payload, (v) => `${v}::jsonb`],
];

const ROWS: Row[] = [
  {
    id: 1,
    text: 'tab\there, newline\nthere, cr\r, backslash \\ and \\N',
    flag: true,
    amount: (2n ** 255n).toString(),
    topics: '{0xaa,0xbb}',
    payload: JSON.stringify({ message: 'a "quoted"\n\\ line', n: 1 }),
  },
  { id: 2, text: null, flag: false, amount: '0', topics: '{}', payload: null },
  { id: 3, text: '\\N', flag: true, amount: '1', topics: '{0x01}', payload: '[]' },
  { id: 4, text: '', flag: false, amount: '42', topics: '{0x02,0x03,0x04}', payload: '{"é":"ü\\ttab"}' },
];

describe('shared/db copyRows', () => {
  const t = useTestDb();

  it('stores every value exactly as the unnest insert does (escapes, nulls, booleans, numerics, arrays, JSON)', async () => {
    const create = (name: string) =>
      `create temporary table ${name} (chain_id bigint, id integer primary key, text text, flag boolean, amount numeric(78,0), topics text[], payload jsonb)`;
    await t.db.transaction(async (tx) => {
      await tx.query(create('copied'));
      await tx.query(create('inserted'));
      await copyRows(tx, 'copied', COLUMNS, { rows: ROWS, chainId: 8453 });
      const { text, values } = unnestInsert('inserted', COLUMNS, { rows: ROWS, chainId: 8453 });
      await tx.query(text, values);
      const read = async (name: string) =>
        (await tx.query(`select chain_id, id, text, flag, amount::text, topics, payload from ${name} order by id`)).rows;
      const copied = await read('copied');
      expect(copied).to.deep.equal(await read('inserted'));
      expect(copied.map((r) => r.text)).to.deep.equal(ROWS.map((r) => r.text));
      expect(copied[0]!.payload).to.deep.equal({ message: 'a "quoted"\n\\ line', n: 1 });
      expect(copied[0]!.topics).to.deep.equal(['0xaa', '0xbb']);
      expect(copied.map((r) => r.chain_id)).to.deep.equal(ROWS.map(() => '8453'));
      // A duplicate key fails, as COPY does (persistBatch then inserts skipping stored rows).
      await tx.query('savepoint again');
      let failed: unknown = null;
      await copyRows(tx, 'copied', COLUMNS, { rows: ROWS.slice(0, 1), chainId: 8453 }).catch((err: unknown) => (failed = err));
      expect((failed as { code?: string } | null)?.code).to.equal('23505');
      await tx.query('rollback to savepoint again');
    });
  });

  it('sends rows of any size across its chunks (values past a chunk, multi-byte text on the boundaries) and fails cleanly mid-stream', async () => {
    // ~3 MB of rows in ~1 MB chunks; one value alone is larger than a chunk; every row carries
    // two- and four-byte UTF-8 so chunk edges fall inside multi-byte text.
    const rows: Row[] = Array.from({ length: 3000 }, (_, i) => ({
      id: i,
      text: `${'é🚀'.repeat(i % 7)}${'ab\t'.repeat(250)}${i}`,
      flag: i % 2 === 0,
      amount: String(i),
      topics: '{}',
      payload: null,
    }));
    rows[1500]!.text = `huge:${'0123456789abcdef'.repeat(100_000)}`;
    await t.db.transaction(async (tx) => {
      await tx.query(
        'create temporary table big (chain_id bigint, id integer primary key, text text, flag boolean, amount numeric(78,0), topics text[], payload jsonb)',
      );
      await copyRows(tx, 'big', COLUMNS, { rows, chainId: 1 });
      const { rows: stored } = await tx.query<{ id: number; text: string }>('select id, text from big order by id');
      expect(stored.length).to.equal(rows.length);
      expect(stored.every((r, i) => r.text === rows[i]!.text)).to.equal(true);

      // Refused by the server while chunks are still going out: its error, as it came.
      await tx.query('savepoint duplicate');
      const refused = await copyRows(tx, 'big', COLUMNS, { rows, chainId: 1 }).catch((err: unknown) => err);
      expect((refused as { code?: string }).code).to.equal('23505');
      await tx.query('rollback to savepoint duplicate');

      // A value that throws after the first chunks went out: the COPY is abandoned, the error is
      // the caller's, and the connection is usable again.
      await tx.query('savepoint failing');
      const failing: ReadonlyArray<Column<Row>> = COLUMNS.map(([name, type, value, convert]) =>
        name === 'text'
          ? [
              name,
              type,
              (r: Row, chainId: number) => {
                if (r.id === 12_900) throw new Error('value failed');
                return value(r, chainId);
              },
              convert,
            ]
          : [name, type, value, convert],
      );
      const error = await copyRows(tx, 'big', failing, { rows: rows.map((r) => ({ ...r, id: r.id + 10_000 })), chainId: 1 }).catch(
        (err: unknown) => err,
      );
      if (t.db.kind === 'postgres') expect((error as Error).message).to.equal('value failed');
      else expect(error).to.be.instanceOf(Error);
      await tx.query('rollback to savepoint failing');
      expect((await tx.query<{ n: number }>('select count(*)::int as n from big')).rows[0]!.n).to.equal(rows.length);
    });
  });
});
