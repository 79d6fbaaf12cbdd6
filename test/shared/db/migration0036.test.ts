/**
 * Migration 0036 on a database written before it: an op's token transfer keeps no transaction hash
 * (its op's row has it), a plain transaction's transfer keeps its own; every read answers as before
 * (the Alchemy-style `hash` by party, an op's transfers, the GraphQL TokenTransfer id and
 * transactionHash), the indexer writes the new form, and a database whose op transfer is in another
 * transaction than its op (or has no op) is refused.
 */
import { expect } from 'chai';
import { listRows } from '../../../server/graphql/rows.js';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import * as tokenTransfers from '../../../shared/db/tables/tokenTransfers.js';
import {
  CHAIN,
  address,
  word,
  TOKEN,
  NFT,
  OP_A,
  OP_B,
  TX_1,
  TX_2,
  transfer,
  insertTransferRowsBefore0036,
} from '../support/tokenTransferRows.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const OP_C = word(0xc);
const TX_PLAIN = word(0x3);
const TX_4 = word(0x4);

/** Block 5: op A (transaction 1) an ERC-20 and an ERC-1155 batch, op B (transaction 2) an ERC-20, a plain ERC-20; block 6: op C an ERC-721. */
const TRANSFERS: tokenTransfers.NewTokenTransfer[] = [
  transfer({ logIndex: 1 }),
  transfer({ logIndex: 2, batchIndex: 0, standard: 'ERC1155', token: NFT, value: 3n, tokenId: 7n }),
  transfer({ logIndex: 2, batchIndex: 1, standard: 'ERC1155', token: NFT, value: 4n, tokenId: 8n }),
  transfer({ txHash: TX_2, logIndex: 5, userOpHash: OP_B, from: address(2), to: address(1), value: 9n }),
  transfer({ txHash: TX_PLAIN, logIndex: 8, userOpHash: null, to: address(1), value: 2n }),
  transfer({ txHash: TX_4, logIndex: 0, blockNumber: 6, userOpHash: OP_C, standard: 'ERC721', token: NFT, value: 1n, tokenId: 9n }),
];

/** Op `hash` in transaction `tx` at block `block`, the columns user_ops requires. */
async function insertOp(db: Queryable, hash: string, tx: string, block: number): Promise<void> {
  await db.query(
    `insert into user_ops (chain_id, user_op_hash, entry_point_version, sender, nonce, success, actual_gas_cost, actual_gas_used,
       block_number, block_time, tx_hash, tx_index, bundle_index, log_index, bundler)
     values ($1, $2, 'v0.7', $3, 0, true, 5, 1, $4::bigint, 1700000000, $5, 0, 0, 3, $3)`,
    [CHAIN, bytea(hash), bytea(address(0xb0)), block, bytea(tx)],
  );
}

const before0036 = () => listMigrations().filter((m) => m.name < '0036');

/** A database at 0035 holding the ops and TRANSFERS as the indexer wrote them, and a token's metadata. */
async function populated(): Promise<TestDatabase> {
  const t = await createTestDatabase({ migrations: before0036() });
  await t.db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
  await insertOp(t.db, OP_A, TX_1, 5);
  await insertOp(t.db, OP_B, TX_2, 5);
  await insertOp(t.db, OP_C, TX_4, 6);
  await insertTransferRowsBefore0036(t.db, CHAIN, TRANSFERS);
  await t.db.query(
    `insert into tokens (chain_id, address, standard, name, symbol, decimals) values ($1, $2, 'ERC20', 'Token', 'TKN', 18)`,
    [CHAIN, bytea(TOKEN)],
  );
  return t;
}

const storedHashes = async (db: Queryable) =>
  (
    await db.query<{ user_op_hash: string | null; tx_hash: string | null }>(
      `select user_op_hash, tx_hash from token_transfers order by block_number, log_index, batch_index`,
    )
  ).rows;

/** What every read of the table answers. */
async function answers(db: Queryable) {
  const graphql = (userOpHash: string) =>
    listRows(db, CHAIN, {
      view: tokenTransfers.tokenTransferView,
      args: { where: { userOpHash }, first: 10 },
      fields: new Set(['id', 'transactionHash', 'logIndex', 'standard', 'value']),
    });
  return {
    a: await tokenTransfers.listByUserOp(db, CHAIN, { userOpHash: OP_A, blockNumber: 5 }),
    b: await tokenTransfers.listByUserOp(db, CHAIN, { userOpHash: OP_B, blockNumber: 5 }),
    erc20From1: await tokenTransfers.listErc20ByAddress(db, CHAIN, address(1), { first: 10, skip: 0 }),
    erc20To1: await tokenTransfers.listErc20ByAddress(db, CHAIN, address(1), { first: 2, skip: 1 }),
    nft: await tokenTransfers.listNftByAddress(db, CHAIN, address(2), { first: 10, skip: 0 }),
    graphqlA: await graphql(OP_A),
    graphqlC: await graphql(OP_C),
  };
}

describe('migration 0036 on a populated database', function () {
  this.timeout(120_000);

  it("drops an op transfer's transaction hash, keeps a plain one's, and answers every read as before", async () => {
    const t = await populated();
    const db = t.db;
    try {
      const before = await answers(db);
      // The answers carry each transfer's transaction hash.
      expect(before.erc20From1.map((x) => x.hash)).to.deep.equal([TX_PLAIN, TX_2, TX_1]);
      expect(before.nft.map((x) => x.hash)).to.deep.equal([TX_4, TX_1, TX_1]);
      expect(before.graphqlA.map((r) => [r.id, r.transactionHash])).to.deep.equal([
        [`${TX_1}-1-0`, TX_1],
        [`${TX_1}-2-0`, TX_1],
        [`${TX_1}-2-1`, TX_1],
      ]);
      expect(before.graphqlC.map((r) => r.id)).to.deep.equal([`${TX_4}-0-0`]);

      await migrate(db);
      expect(await storedHashes(db)).to.deep.equal([
        { user_op_hash: OP_A, tx_hash: null },
        { user_op_hash: OP_A, tx_hash: null },
        { user_op_hash: OP_A, tx_hash: null },
        { user_op_hash: OP_B, tx_hash: null },
        { user_op_hash: null, tx_hash: TX_PLAIN },
        { user_op_hash: OP_C, tx_hash: null },
      ]);
      expect(await answers(db)).to.deep.equal(before);

      // The indexer's writes (COPY and insert): an op's transfer without its hash, a plain one's with it.
      await insertOp(db, word(0xd), word(0x5), 7);
      await tokenTransfers.appendMany(db, CHAIN, [transfer({ blockNumber: 7, txHash: word(0x5), userOpHash: word(0xd) })]);
      await tokenTransfers.insertMany(db, CHAIN, [transfer({ blockNumber: 7, logIndex: 1, txHash: word(0x6), userOpHash: null })]);
      expect((await storedHashes(db)).slice(-2)).to.deep.equal([
        { user_op_hash: word(0xd), tx_hash: null },
        { user_op_hash: null, tx_hash: word(0x6) },
      ]);
      expect((await tokenTransfers.listErc20ByAddress(db, CHAIN, address(1), { first: 2, skip: 0 })).map((x) => x.hash)).to.deep.equal([
        word(0x6),
        word(0x5),
      ]);
      // A row with both (or neither) is not the indexer's.
      const error = await insertTransferRowsBefore0036(db, CHAIN, [
        transfer({ blockNumber: 8, txHash: word(0x5), userOpHash: word(0xd) }),
      ]).then(
        () => null,
        (e: Error) => e,
      );
      expect(error?.message).to.match(/token_transfers_op_or_tx/);
    } finally {
      await t.drop();
    }
  });

  for (const [what, op] of [
    ['in another transaction than its op', OP_B],
    ['without its op', word(0xe)],
  ] as const) {
    it(`refuses a database with an op transfer ${what}, keeping every hash`, async () => {
      const t = await populated();
      const db = t.db;
      try {
        await insertTransferRowsBefore0036(db, CHAIN, [transfer({ blockNumber: 9, txHash: TX_1, userOpHash: op })]);
        const error = await migrate(db).then(
          () => null,
          (e: Error) => e,
        );
        expect(error?.message).to.match(
          /Migration 0036_op_transfers_without_tx_hash\.sql failed: .*tx_hash is not its op's \(block 9, log 0, op 0x/,
        );
        expect((await storedHashes(db)).every((r) => r.tx_hash !== null)).to.equal(true);
      } finally {
        await t.drop();
      }
    });
  }
});
