/**
 * Migration 0045 on a database written before it: address_transactions loses the rows of an op's
 * first call target and of a token transfer's parties, which user_ops and token_transfers answer,
 * and keeps the others (a later call's target, the sender of a transaction without ops); every
 * address's list, page by page, is the one the read before 0045 gave: a transfer inside an op, one
 * outside any op, a mint, and a plain transaction's transfer (no bundle transaction) included.
 */
import { expect } from 'chai';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import * as addressTransactions from '../../../shared/db/tables/addressTransactions.js';
import { ZERO_ADDRESS } from '../../../shared/chain/constants.js';
import { address, addressPages, addressRows, insertBundleTransaction, positionsReader, word } from '../../helpers/addressTransactions.js';
import { createTestDatabase } from '../../helpers/db.js';

const CHAIN = 31337;
const BUNDLER = address(0xb0);
const OTHER_BUNDLER = address(0xb1);
const SENDER = address(0x5e);
const OTHER_SENDER = address(0x5f);
const TARGET = address(0x7a);
const LATER_TARGET = address(0x7b);
const RECEIVER = address(0x7c);
const PAYER = address(0x7d);
const TOKEN = address(0xe2);

type Op = { sender: string; target: string | null; laterTargets: string[]; logIndex: number };
type Transfer = { from: string; to: string; logIndex: number; op: number | null };
/** Bundle transactions: block, index, sender, ops, token transfers (op: the index of its op in `ops`, null outside any op). */
const TXS: Array<{ block: number; index: number; from: string; ops: Op[]; transfers: Transfer[] }> = [
  {
    block: 5,
    index: 0,
    from: BUNDLER,
    ops: [{ sender: SENDER, target: TARGET, laterTargets: [LATER_TARGET], logIndex: 3 }],
    transfers: [{ from: SENDER, to: RECEIVER, logIndex: 2, op: 0 }],
  },
  {
    block: 5,
    index: 2,
    from: OTHER_BUNDLER,
    ops: [{ sender: OTHER_SENDER, target: RECEIVER, laterTargets: [], logIndex: 9 }],
    transfers: [{ from: PAYER, to: RECEIVER, logIndex: 10, op: null }],
  },
  {
    block: 6,
    index: 1,
    from: BUNDLER,
    ops: [
      { sender: SENDER, target: TARGET, laterTargets: [], logIndex: 4 },
      { sender: OTHER_SENDER, target: null, laterTargets: [], logIndex: 9 },
    ],
    transfers: [
      { from: OTHER_SENDER, to: TARGET, logIndex: 7, op: 1 },
      { from: ZERO_ADDRESS, to: RECEIVER, logIndex: 8, op: 1 },
    ],
  },
  { block: 7, index: 0, from: BUNDLER, ops: [], transfers: [] },
];
/** A plain transaction's transfer (INDEXER_TRANSFERS=known): no bundle transaction, no address row. */
const PLAIN_TRANSFER = { block: 7, txHash: word(0xbeef), from: PAYER, to: SENDER, logIndex: 5 };

const txHashOf = (block: number, index: number) => word(block * 100 + index);
const opHashOf = (block: number, logIndex: number) => word(0x10000 + block * 100 + logIndex);

/** address_transactions as the indexer wrote it before 0045: every party but the ops' senders, the bundler and the zero address. */
function rowsBefore(): Array<[string, number, number]> {
  const rows: Array<[string, number, number]> = [];
  for (const tx of TXS) {
    const parties = new Set([tx.from, ...tx.ops.flatMap((o) => [...(o.target ? [o.target] : []), ...o.laterTargets])]);
    for (const t of tx.transfers) parties.add(t.from).add(t.to);
    parties.delete(ZERO_ADDRESS);
    for (const o of tx.ops) parties.delete(o.sender);
    if (tx.ops.length > 0) parties.delete(tx.from);
    for (const a of parties) rows.push([a, tx.block, tx.index]);
  }
  return rows;
}

/** The read before 0045: address_transactions and the transactions of the address's ops as their sender or bundler. */
const POSITIONS_BEFORE = `select block_number, tx_index from address_transactions where chain_id = $1 and address = $2
  union select block_number, tx_index from user_ops where chain_id = $1 and (sender = $2 or bundler = $2)`;

async function insertTransfer(
  db: Queryable,
  t: { block: number; logIndex: number; txHash: string | null; userOpHash: string | null; from: string; to: string },
) {
  await db.query(
    `insert into token_transfers (chain_id, tx_hash, log_index, batch_index, block_number, block_time, user_op_hash, standard, token,
                                  from_address, to_address, value)
     values ($1, $2, $3, 0, $4, $5, $6, 'ERC20', $7, $8, $9, 1)`,
    [
      CHAIN,
      t.txHash === null ? null : bytea(t.txHash),
      t.logIndex,
      t.block,
      1_700_000_000 + t.block * 12,
      t.userOpHash === null ? null : bytea(t.userOpHash),
      bytea(TOKEN),
      bytea(t.from),
      bytea(t.to),
    ],
  );
}

describe('migration 0045 on a populated database', function () {
  this.timeout(120_000);

  it("drops the rows of ops' first targets and of transfer parties and answers every page as before", async () => {
    const t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0045') });
    const db = t.db;
    try {
      await db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
      for (const tx of TXS) {
        const txHash = txHashOf(tx.block, tx.index);
        await insertBundleTransaction(db, CHAIN, { txHash, block: tx.block, index: tx.index, from: tx.from });
        for (const op of tx.ops) {
          await db.query(
            `insert into user_ops (chain_id, user_op_hash, entry_point_version, sender, nonce, success, actual_gas_cost, actual_gas_used,
                                   block_number, block_time, tx_hash, tx_index, bundle_index, log_index, bundler, target)
             values ($1, $2, 'v0.7', $3, $4, true, 1, 1, $5, $6, $7, $8, 0, $11, $9, $10)`,
            [
              CHAIN,
              bytea(opHashOf(tx.block, op.logIndex)),
              bytea(op.sender),
              op.logIndex,
              tx.block,
              1_700_000_000 + tx.block * 12,
              bytea(txHash),
              tx.index,
              bytea(tx.from),
              op.target === null ? null : bytea(op.target),
              op.logIndex,
            ],
          );
        }
        for (const transfer of tx.transfers) {
          const op = transfer.op === null ? null : tx.ops[transfer.op]!;
          await insertTransfer(db, {
            block: tx.block,
            logIndex: transfer.logIndex,
            txHash: op === null ? txHash : null,
            userOpHash: op === null ? null : opHashOf(tx.block, op.logIndex),
            from: transfer.from,
            to: transfer.to,
          });
        }
      }
      await insertTransfer(db, { ...PLAIN_TRANSFER, userOpHash: null });
      for (const [a, block, index] of rowsBefore()) {
        await db.query(`insert into address_transactions (chain_id, address, block_number, tx_index) values ($1, $2, $3, $4)`, [
          CHAIN,
          bytea(a),
          block,
          index,
        ]);
      }
      const addresses = [BUNDLER, OTHER_BUNDLER, SENDER, OTHER_SENDER, TARGET, LATER_TARGET, RECEIVER, PAYER, ZERO_ADDRESS, address(0x99)];
      const pages = [1, 2, 3, 10].flatMap((first) => [0, 1, 2, 3, 4].map((skip) => ({ first, skip })));
      const before = await addressPages(addresses, pages, positionsReader(db, CHAIN, POSITIONS_BEFORE));
      const heights = (a: string) =>
        (before.get(`${a}:10:0`) as Array<{ block_height: number; tx_offset: number }>).map((x) => [x.block_height, x.tx_offset]);
      expect(heights(RECEIVER)).to.deep.equal([
        [6, 1],
        [5, 2],
        [5, 0],
      ]);
      expect(heights(PAYER)).to.deep.equal([[5, 2]]);

      await migrate(db);

      // Kept: a later call's target, and the sender of the transaction without ops.
      expect(await addressRows(db)).to.deep.equal([
        [LATER_TARGET, 5, 0],
        [BUNDLER, 7, 0],
      ]);
      expect(await addressPages(addresses, pages, (a, p) => addressTransactions.listByAddress(db, CHAIN, a, p))).to.deep.equal(before);
    } finally {
      await t.drop();
    }
  });
});
