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
});
