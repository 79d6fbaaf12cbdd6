/**
 * Migration 0030 on a database written before it: token_transfers keyed by (chain_id, block_number,
 * log_index, batch_index) without its op-hash index keeps every row, an op's transfers are still its
 * own (not those of another op, a plain transfer or a native one in the same block), the indexer's
 * `on conflict do nothing` writes and the rollback use the new key, and a database with two
 * transfers at one place is refused rather than migrated.
 */
import { expect } from 'chai';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import * as tokenTransfers from '../../../shared/db/tables/tokenTransfers.js';
import {
  CHAIN,
  address,
  word,
  TOKEN,
  NFT,
  OP_A,
  OP_B,
  TX_2,
  transfer,
  insertTransferRowsBefore0036,
} from '../support/tokenTransferRows.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * Block 5: op A (event at log 3) in transaction 1 sends an ERC-20, two ERC-1155 ids in one batch and
 * native value by two calls; op B (event at log 6) in transaction 2 an ERC-20 and native value; a
 * plain transfer in the same block. Block 6: op A's hash again would be another op, so only B's.
 */
const TRANSFERS: tokenTransfers.NewTokenTransfer[] = [
  transfer({ logIndex: 1 }),
  transfer({ logIndex: 2, batchIndex: 0, standard: 'ERC1155', token: NFT, value: 3n, tokenId: 7n }),
  transfer({ logIndex: 2, batchIndex: 1, standard: 'ERC1155', token: NFT, value: 4n, tokenId: 8n }),
  transfer({ logIndex: -1 - 3, batchIndex: 0, standard: 'NATIVE', token: null, value: 5n }),
  transfer({ logIndex: -1 - 3, batchIndex: 1, standard: 'NATIVE', token: null, to: address(3), value: 6n }),
  transfer({ txHash: TX_2, logIndex: 5, userOpHash: OP_B, from: address(2), to: address(1), value: 9n }),
  transfer({ txHash: TX_2, logIndex: -1 - 6, userOpHash: OP_B, standard: 'NATIVE', token: null, value: 1n }),
  transfer({ txHash: word(0x3), logIndex: 8, userOpHash: null, to: address(4), value: 2n }),
  transfer({ txHash: word(0x4), logIndex: 0, blockNumber: 6, userOpHash: OP_B, value: 11n }),
];

const allRows = async (db: Queryable) =>
  (await db.query(`select * from token_transfers order by block_number, log_index, batch_index, tx_hash`)).rows;

/** What the reads of the table answer: each op's transfers, and each party's. */
async function answers(db: Queryable) {
  return {
    a: await tokenTransfers.listByUserOp(db, CHAIN, { userOpHash: OP_A, blockNumber: 5 }),
    b5: await tokenTransfers.listByUserOp(db, CHAIN, { userOpHash: OP_B, blockNumber: '5' }),
    b6: await tokenTransfers.listByUserOp(db, CHAIN, { userOpHash: OP_B, blockNumber: 6 }),
    erc20: await tokenTransfers.listErc20ByAddress(db, CHAIN, address(1), { first: 10, skip: 0 }),
    nft: await tokenTransfers.listNftByAddress(db, CHAIN, address(2), { first: 10, skip: 0 }),
  };
}

/** 0030 and the migrations before it (0035 deletes the native rows this test keeps an eye on). */
const UP_TO_0030 = listMigrations().filter((m) => m.name < '0031');

/** A database at 0029 holding TRANSFERS and their tokens' metadata. */
async function before0030(): Promise<TestDatabase> {
  const t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0030') });
  await t.db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
  // As the indexer wrote them before 0035 (native rows) and 0036 (an op's transfer with its transaction hash).
  await insertTransferRowsBefore0036(t.db, CHAIN, TRANSFERS);
  await t.db.query(
    `insert into tokens (chain_id, address, standard, name, symbol, decimals) values ($1, $2, 'ERC20', 'Token', 'TKN', 18)`,
    [CHAIN, bytea(TOKEN)],
  );
  return t;
}

describe('migration 0030 on a populated database', function () {
  this.timeout(120_000);

  it('keys token_transfers by position without its op index, every row and answer kept', async () => {
    const t = await before0030();
    const db = t.db;
    try {
      const rowsBefore = await allRows(db);
      const answersBefore = await answers(db);
      await migrate(db, UP_TO_0030);
      expect(await allRows(db)).to.deep.equal(rowsBefore);
      expect(await answers(db)).to.deep.equal(answersBefore);

      // The op's own token transfers only, in log order: not B's, the plain one's or the native ones.
      expect(answersBefore.a.map((x) => [x.standard, x.value, x.tokenId])).to.deep.equal([
        ['ERC20', String(10n ** 18n), null],
        ['ERC1155', '3', '7'],
        ['ERC1155', '4', '8'],
      ]);
      expect(answersBefore.a[0]).to.include({ name: 'Token', symbol: 'TKN', decimals: 18 });
      expect(answersBefore.b5.map((x) => x.value)).to.deep.equal(['9']);
      expect(answersBefore.b6.map((x) => x.value)).to.deep.equal(['11']);

      const { rows: indexes } = await db.query<{ indexname: string; indexdef: string }>(
        `select indexname, indexdef from pg_indexes where tablename = 'token_transfers' order by indexname`,
      );
      expect(indexes.map((i) => i.indexname)).to.deep.equal(['token_transfers_from', 'token_transfers_pkey', 'token_transfers_to']);
      expect(indexes.find((i) => i.indexname === 'token_transfers_pkey')!.indexdef).to.match(
        /\(chain_id, block_number, log_index, batch_index\)$/,
      );

      // Writing the stored rows again adds none; the rollback deletes above a block.
      await insertTransferRowsBefore0036(db, CHAIN, TRANSFERS);
      expect(await allRows(db)).to.have.length(TRANSFERS.length);
      await tokenTransfers.deleteAbove(db, CHAIN, 5);
      expect(await allRows(db)).to.have.length(TRANSFERS.length - 1);
    } finally {
      await t.drop();
    }
  });

  it('refuses two transfers at one place in a block (log indexes not block-level), keeping the old key', async () => {
    const t = await before0030();
    const db = t.db;
    try {
      await insertTransferRowsBefore0036(db, CHAIN, [transfer({ txHash: TX_2, logIndex: 1 })]);
      const error = await migrate(db, UP_TO_0030).then(
        () => null,
        (e: Error) => e,
      );
      expect(error?.message).to.match(/Migration 0030_token_transfers_by_position\.sql failed: .*two transfers at one/);
      expect(await allRows(db)).to.have.length(TRANSFERS.length + 1);
      const { rows } = await db.query(`select 1 from pg_indexes where indexname = 'token_transfers_user_op'`);
      expect(rows, 'the op index is kept').to.have.length(1);
    } finally {
      await t.drop();
    }
  });
});
