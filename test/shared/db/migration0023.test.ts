/**
 * Migration 0023 on a database written before it: each bundle transaction's `logs` rows become its
 * packed logs (the bytes the indexer now writes), address_transactions finds its transactions by
 * block and index, and a database whose logs it could not keep is refused rather than migrated.
 */
import { expect } from 'chai';
import { bytea } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import * as addressTransactions from '../../../shared/db/tables/addressTransactions.js';
import * as logs from '../../../shared/db/tables/logs.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const CHAIN = 31337;
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const TX = word(0x7a);
const LOGS: logs.TransactionLog[] = [
  { address: address(1), topics: [word(1)], data: '0x' },
  { address: address(2), topics: [], data: '0x0102' },
  { address: address(3), topics: [word(1), word(2), word(3), word(4)], data: `0x${'ee'.repeat(300)}` },
];
const FIRST_LOG_INDEX = 7;

/** A database at 0022 holding one bundle transaction (block 5, index 2), its logs and one address row. */
async function before0023(): Promise<TestDatabase> {
  const t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0023') });
  const db = t.db;
  await db.query(
    `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input, status,
                                      gas_used, effective_gas_price, fee)
     values ($1, $2, 5, $3, 1700000000, 2, $4, $4, $5, true, 21000, 1, 21000)`,
    [CHAIN, bytea(TX), bytea(word(0xb10c)), bytea(address(9)), bytea('0x765e827f')],
  );
  for (const [i, log] of LOGS.entries()) {
    await db.query(
      `insert into logs (chain_id, tx_hash, log_index, tx_log_index, block_number, address, topics, data, user_op_hash)
       values ($1, $2, $3, $4, 5, $5, $6::bytea[], $7, null)`,
      [CHAIN, bytea(TX), FIRST_LOG_INDEX + i, i, bytea(log.address), log.topics.map((t) => bytea(t)), bytea(log.data)],
    );
  }
  await db.query(`insert into address_transactions (chain_id, address, tx_hash, block_number, tx_index) values ($1, $2, $3, 5, 2)`, [
    CHAIN,
    bytea(address(9)),
    bytea(TX),
  ]);
  return t;
}

describe('migration 0023 on a populated database', function () {
  this.timeout(120_000);

  it("packs each transaction's logs as the indexer does and keeps every answer", async () => {
    const t = await before0023();
    const db = t.db;
    try {
      await migrate(db);
      const { rows } = await db.query<{ first_log_index: number; logs: string }>(
        `select first_log_index, logs from bundle_transactions where chain_id = $1`,
        [CHAIN],
      );
      expect(rows).to.deep.equal([{ first_log_index: FIRST_LOG_INDEX, logs: logs.packLogs(LOGS) }]);
      const found = await logs.find(db, CHAIN, TX, FIRST_LOG_INDEX + 2);
      expect(found).to.include({ logIndex: '9', transactionLogIndex: '2', blockNumber: '5', transactionHash: TX, userOpHash: null });
      expect(found).to.deep.include(LOGS[2]);
      expect(await logs.find(db, CHAIN, TX, FIRST_LOG_INDEX + 3)).to.equal(null);
      expect(await logs.find(db, CHAIN, TX, FIRST_LOG_INDEX - 1)).to.equal(null);
      const txs = await addressTransactions.listByAddress(db, CHAIN, address(9), { first: 10, skip: 0 });
      expect(txs.map((t) => [t.tx_hash, t.block_height, t.tx_offset])).to.deep.equal([[TX, 5, 2]]);
      const { rows: tables } = await db.query(`select 1 from pg_class where relname = 'logs'`);
      expect(tables).to.deep.equal([]);
    } finally {
      await t.drop();
    }
  });

  it('refuses logs it could not keep: without their transaction, or not numbered in sequence', async () => {
    for (const breakIt of [
      `delete from bundle_transactions`,
      `update logs set log_index = log_index + 1 where tx_log_index = 2`,
      `update address_transactions set tx_index = 3`,
    ]) {
      const t = await before0023();
      const db = t.db;
      try {
        await db.query(breakIt);
        const error = await migrate(db).then(
          () => null,
          (e: Error) => e,
        );
        expect(error?.message, breakIt).to.match(
          /Migration 0023_packed_transaction_logs\.sql failed: .*(no bundle_transactions row|cannot be packed|not the bundle transaction at its block)/,
        );
        const { rows } = await db.query(`select 1 from logs`);
        expect(rows, 'the logs are kept').to.have.length(LOGS.length);
      } finally {
        await t.drop();
      }
    }
  });
});
