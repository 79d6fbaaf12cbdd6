/**
 * Migration 0032 on a database written before it: address_transactions loses the rows of
 * an op's sender and bundler, which user_ops answers, and keeps the others (call targets, transfer
 * parties, the sender of a transaction without ops); every address's list, page by page, is the one
 * the read before 0032 gave, a sender with several ops in one transaction included.
 */
import { expect } from 'chai';
import { bytea } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import * as addressTransactions from '../../../shared/db/tables/addressTransactions.js';
import { address, addressPages, addressRows, insertBundleTransaction, positionsReader, word } from '../../helpers/addressTransactions.js';
import { createTestDatabase } from '../../helpers/db.js';

const CHAIN = 31337;
const BUNDLER = address(0xb0);
const OTHER_BUNDLER = address(0xb1);
const SENDER = address(0x5e);
const LONE_SENDER = address(0x5f);
const TARGET = address(0x7a);

/** Bundle transactions: [block, index, sender, ops as [sender, log index]] (block 8, index 1 has no ops). */
const TXS: Array<[number, number, string, Array<[string, number]>]> = [
  [5, 0, BUNDLER, [[SENDER, 3]]],
  [5, 2, OTHER_BUNDLER, [[LONE_SENDER, 9]]],
  // Several ops of one sender in one transaction, between two of its other transactions.
  [
    6,
    1,
    BUNDLER,
    [
      [SENDER, 4],
      [SENDER, 6],
      [LONE_SENDER, 7],
      [SENDER, 8],
    ],
  ],
  [
    7,
    0,
    OTHER_BUNDLER,
    [
      [SENDER, 1],
      [SENDER, 2],
    ],
  ],
  [8, 1, BUNDLER, []],
  [9, 3, BUNDLER, [[SENDER, 20]]],
];

/** address_transactions as the indexer wrote it before 0032: every bundler and sender, and the call target in some. */
function rowsBefore(): Array<[string, number, number]> {
  const rows = new Map<string, [string, number, number]>();
  for (const [block, index, bundler, ops] of TXS) {
    for (const a of [bundler, ...ops.map(([sender]) => sender), ...(block % 2 === 1 ? [TARGET] : [])]) {
      rows.set(`${a}:${block}:${index}`, [a, block, index]);
    }
  }
  return [...rows.values()];
}

/** The read before 0032: address_transactions alone. */
const POSITIONS_BEFORE = `select block_number, tx_index from address_transactions where chain_id = $1 and address = $2`;

describe('migration 0032 on a populated database', function () {
  this.timeout(120_000);

  it("drops the rows of ops' senders and bundlers and answers every page as before", async () => {
    const t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0032') });
    const db = t.db;
    try {
      await db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
      for (const [block, index, bundler, ops] of TXS) {
        const txHash = word(block * 100 + index);
        await insertBundleTransaction(db, CHAIN, { txHash, block, index, from: bundler });
        for (const [sender, logIndex] of ops) {
          await db.query(
            `insert into user_ops (chain_id, user_op_hash, entry_point, entry_point_version, sender, nonce, success, actual_gas_cost,
                                   actual_gas_used, block_number, block_hash, block_time, tx_hash, tx_index, bundle_index, log_index, bundler)
             values ($1, $2, $3, 'v0.7', $4, $5, true, 1, 1, $6, $7, $8, $9, $10, 0, $11, $12)`,
            [
              CHAIN,
              bytea(word(0x10000 + block * 100 + logIndex)),
              bytea(address(0xe9)),
              bytea(sender),
              logIndex,
              block,
              bytea(word(block)),
              1_700_000_000 + block * 12,
              bytea(txHash),
              index,
              logIndex,
              bytea(bundler),
            ],
          );
        }
      }
      for (const [a, block, index] of rowsBefore()) {
        await db.query(`insert into address_transactions (chain_id, address, block_number, tx_index) values ($1, $2, $3, $4)`, [
          CHAIN,
          bytea(a),
          block,
          index,
        ]);
      }
      const addresses = [BUNDLER, OTHER_BUNDLER, SENDER, LONE_SENDER, TARGET, address(0x99)];
      const pages = [1, 2, 3, 10].flatMap((first) => [0, 1, 2, 3, 4, 6].map((skip) => ({ first, skip })));
      const before = await addressPages(addresses, pages, positionsReader(db, CHAIN, POSITIONS_BEFORE));
      expect((before.get(`${SENDER}:10:0`) as Array<{ block_height: number }>).map((x) => x.block_height)).to.deep.equal([9, 7, 6, 5]);

      // Up to 0032 only: later migrations check rows (bundles) this fixture does not hold.
      await migrate(
        db,
        listMigrations().filter((m) => m.name < '0033'),
      );

      // Kept: the call target's rows, and the sender of the transaction without ops.
      expect(await addressRows(db)).to.deep.equal([
        [TARGET, 5, 0],
        [TARGET, 5, 2],
        [TARGET, 7, 0],
        [TARGET, 9, 3],
        [BUNDLER, 8, 1],
      ]);
      expect(await addressPages(addresses, pages, (a, p) => addressTransactions.listByAddress(db, CHAIN, a, p))).to.deep.equal(before);
    } finally {
      await t.drop();
    }
  });
});
