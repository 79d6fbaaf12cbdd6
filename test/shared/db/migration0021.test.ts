/**
 * Migration 0021 on a database written before it: address_transactions keyed by its
 * reading order keeps every row, answers in the same order, and still refuses a row stored twice;
 * the indexes it replaces are gone and their replacements in place.
 */
import { expect } from 'chai';
import { bytea, createDb } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';

const CHAIN = 31337;
const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const tx = (n: number) => '0x' + n.toString(16).padStart(64, '0');
const ROWS = [
  { address: A, txHash: tx(1), blockNumber: 5, txIndex: 0 },
  { address: A, txHash: tx(2), blockNumber: 5, txIndex: 1 },
  { address: A, txHash: tx(3), blockNumber: 7, txIndex: 0 },
  { address: A, txHash: tx(4), blockNumber: 3, txIndex: 2 },
  { address: B, txHash: tx(2), blockNumber: 5, txIndex: 1 },
];

describe('migration 0021 on a populated database', function () {
  this.timeout(120_000);

  it('keeps address_transactions rows and their order, refuses duplicates, and swaps the indexes', async () => {
    const db = await createDb({});
    try {
      const all = listMigrations();
      await migrate(
        db,
        all.filter((m) => m.name < '0021'),
      );
      // Rows as the release before 0021 stored them (0x-hex text; 0022 makes them bytea later).
      for (const r of ROWS)
        await db.query(
          `insert into address_transactions (chain_id, address, tx_hash, block_number, tx_index) values ($1, $2, $3, $4, $5)`,
          [CHAIN, r.address, r.txHash, r.blockNumber, r.txIndex],
        );
      const newestFirst = async (address: string, asStored: (hex: string) => string = (hex) => hex) =>
        (
          await db.query<{ tx_hash: string }>(
            `select tx_hash from address_transactions where chain_id = $1 and address = $2 order by block_number desc, tx_index desc`,
            [CHAIN, asStored(address)],
          )
        ).rows.map((r) => r.tx_hash);
      const orderBefore = [await newestFirst(A), await newestFirst(B)];
      expect(orderBefore[0]).to.deep.equal([tx(3), tx(2), tx(1), tx(4)]);

      // Up to 0022 (0023 drops address_transactions.tx_hash, read here, and logs_block's table).
      await migrate(
        db,
        all.filter((m) => m.name < '0023'),
      );

      expect([await newestFirst(A, bytea), await newestFirst(B, bytea)]).to.deep.equal(orderBefore);
      // The indexer writes a range again after a crash (as it did up to 0022): nothing is stored twice.
      for (const r of ROWS)
        await db.query(
          `insert into address_transactions (chain_id, address, tx_hash, block_number, tx_index) values ($1, $2, $3, $4, $5) on conflict do nothing`,
          [CHAIN, bytea(r.address), bytea(r.txHash), r.blockNumber, r.txIndex],
        );
      const { rows } = await db.query<{ n: string }>(`select count(*) as n from address_transactions`);
      expect(Number(rows[0]!.n)).to.equal(ROWS.length);

      const { rows: indexes } = await db.query<{ name: string; def: string }>(
        `select indexname as name, indexdef as def from pg_indexes
          where schemaname = current_schema()
            and tablename in ('address_transactions', 'logs', 'bundle_transactions', 'user_op_calls', 'token_transfers')
          order by 1`,
      );
      const byName = new Map(indexes.map((i) => [i.name, i.def]));
      for (const gone of ['address_transactions_recent', 'user_op_calls_target', 'bundle_transactions_from'])
        expect(byName.has(gone), gone).to.equal(false);
      expect(byName.get('address_transactions_pkey')).to.match(/\(chain_id, address, block_number, tx_index\)/);
      expect(byName.get('logs_block')).to.match(/USING brin \(block_number\)/);
      expect(byName.get('bundle_transactions_block')).to.match(/USING brin \(block_number\)/);
      expect(byName.get('token_transfers_user_op')).to.match(/WHERE \(user_op_hash IS NOT NULL\)/);
    } finally {
      await db.close();
    }
  });
});
