/**
 * Migration 0035 on a database written before it: an op's native value transfers (NATIVE rows of
 * token_transfers) are deleted, every token transfer kept and answered as before; the indexer's
 * writes store no native row from then on.
 */
import { expect } from 'chai';
import type { Queryable } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import * as tokenTransfers from '../../../shared/db/tables/tokenTransfers.js';
import { insertTransferRowsBefore0036 } from '../support/tokenTransferRows.js';
import { createTestDatabase } from '../../helpers/db.js';

const CHAIN = 31337;
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const OP = word(0xa);

const transfer = (t: Partial<tokenTransfers.NewTokenTransfer>): tokenTransfers.NewTokenTransfer => ({
  txHash: word(1),
  logIndex: 0,
  batchIndex: 0,
  blockNumber: 5,
  blockTime: 1_700_000_000,
  userOpHash: OP,
  standard: 'ERC20',
  token: address(0x70),
  from: address(1),
  to: address(2),
  value: 7n,
  tokenId: null,
  ...t,
});
const TOKEN_TRANSFERS = [
  transfer({ logIndex: 1 }),
  transfer({ logIndex: 2, standard: 'ERC721', token: address(0x71), value: 1n, tokenId: 9n }),
];
const NATIVE = [
  transfer({ logIndex: -1 - 3, batchIndex: 0, standard: 'NATIVE', token: null, value: 5n }),
  transfer({ logIndex: -1 - 3, batchIndex: 1, standard: 'NATIVE', token: null, to: address(3), value: 6n }),
];

const rowsOf = async (db: Queryable) =>
  (
    await db.query<{ standard: string; log_index: number }>(
      `select standard, log_index from token_transfers order by block_number, log_index, batch_index`,
    )
  ).rows;

async function answers(db: Queryable) {
  return {
    op: await tokenTransfers.listByUserOp(db, CHAIN, { userOpHash: OP, blockNumber: 5 }),
    erc20: await tokenTransfers.listErc20ByAddress(db, CHAIN, address(1), { first: 10, skip: 0 }),
    nft: await tokenTransfers.listNftByAddress(db, CHAIN, address(2), { first: 10, skip: 0 }),
  };
}

describe('migration 0035 on a populated database', function () {
  this.timeout(120_000);

  it('deletes the native rows, keeps and answers every token transfer; no native row is written after it', async () => {
    const t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0035') });
    const db = t.db;
    try {
      await db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
      // The rows as the indexer wrote them before 0035 (native rows) and 0036 (an op's transfer with its transaction hash).
      await insertTransferRowsBefore0036(db, CHAIN, [...TOKEN_TRANSFERS, ...NATIVE]);
      expect((await rowsOf(db)).map((r) => r.standard)).to.deep.equal(['NATIVE', 'NATIVE', 'ERC20', 'ERC721']);
      const before = await answers(db);
      expect(before.op.map((x) => x.standard)).to.deep.equal(['ERC20', 'ERC721']);

      await migrate(
        db,
        listMigrations().filter((m) => m.name < '0036'),
      );
      expect(await rowsOf(db)).to.deep.equal([
        { standard: 'ERC20', log_index: 1 },
        { standard: 'ERC721', log_index: 2 },
      ]);
      expect(await answers(db)).to.deep.equal(before);

      // The indexer's writes (COPY and insert) keep the token transfers of a batch, not its native ones
      // (the kept one a plain transaction's: the writer stores an op's without its hash, which 0036 allows).
      const next = [
        transfer({ blockNumber: 6, logIndex: 0, userOpHash: null }),
        transfer({ blockNumber: 6, logIndex: -1 - 1, standard: 'NATIVE', token: null }),
      ];
      await tokenTransfers.appendMany(db, CHAIN, next);
      await tokenTransfers.insertMany(db, CHAIN, [transfer({ blockNumber: 7, logIndex: -1 - 1, standard: 'NATIVE', token: null })]);
      expect((await rowsOf(db)).map((r) => r.standard)).to.deep.equal(['ERC20', 'ERC721', 'ERC20']);
    } finally {
      await t.drop();
    }
  });
});
