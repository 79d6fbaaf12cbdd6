/**
 * Migration 0031 on a database written before it: user_ops loses its transaction-hash index, and
 * every read of ops by transaction (the /v0 bundle activity, logs by op and by index, the latest
 * bundles' op lists, the GraphQL `transactionHash` filter and Bundle.userOps), which now finds them
 * in the transaction's block, answers as before, ops of another transaction in the same block left
 * out. A database holding an op without its transaction in its block is refused.
 */
import { expect } from 'chai';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import { migrate } from '../../../shared/db/migrate.js';
import * as bundles from '../../../shared/db/tables/bundles.js';
import * as logs from '../../../shared/db/tables/logs.js';
import * as userOps from '../../../shared/db/tables/userOps.js';
import { ENTITIES } from '../../../server/graphql/entities.js';
import { listRows, listRowsPerParent } from '../../../server/graphql/rows.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const CHAIN = 31337;
const BLOCK = 10;
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** A transaction: its hash, block and index in the block. */
type Tx = { hash: string; block: number; index: number };
/** Two transactions in block 10 (indexes 0 and 1) and one in block 11. */
const A: Tx = { hash: word(0xa), block: BLOCK, index: 0 };
const B: Tx = { hash: word(0xb), block: BLOCK, index: 1 };
const C: Tx = { hash: word(0xc), block: BLOCK + 1, index: 0 };
const [TX_A, TX_B, TX_C] = [A.hash, B.hash, C.hash];
const LOGS: logs.TransactionLog[] = [
  { address: address(1), topics: [word(1)], data: '0x01' },
  { address: address(2), topics: [word(2)], data: '0x02' },
  { address: address(3), topics: [word(3)], data: '0x03' },
];

function newOp(n: number, tx: Tx, bundleIndex: number, logIndex: number): userOps.NewUserOp {
  return {
    userOpHash: word(0xab00 + n),
    entryPoint: address(0xe7),
    entryPointVersion: 'v0.7',
    sender: address(0x500 + n),
    paymaster: null,
    nonce: BigInt(n),
    success: true,
    actualGasCost: 1n,
    actualGasUsed: 1n,
    failure: null,
    revertReason: null,
    revertMessage: null,
    blockNumber: tx.block,
    blockHash: word(tx.block),
    blockTime: 1000 + tx.block,
    txHash: tx.hash,
    txIndex: tx.index,
    bundleIndex,
    opIndex: null,
    opAt: null,
    logIndex,
    execLogFrom: logIndex - 1,
    execLogTo: logIndex,
    bundler: address(0xb0),
    beneficiary: null,
    factory: null,
    aggregator: null,
    initCode: null,
    callData: '0x',
    signature: '0x',
    paymasterAndData: '0x',
    callGasLimit: 1n,
    verificationGasLimit: 1n,
    preVerificationGas: 1n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    paymasterVerificationGasLimit: null,
    paymasterPostOpGasLimit: null,
    accountGasLimits: null,
    gasFees: null,
    decodeStatus: 'ok',
    eip7702: false,
    paymasterSignature: null,
    target: null,
    calls: [],
  };
}

/** Transaction A holds two bundles (ops 1, 2 and op 3), B one op (4) in the same block, C one op (5) in the next. */
const OPS = [newOp(1, A, 0, 1), newOp(2, A, 0, 2), newOp(3, A, 1, 3), newOp(4, B, 0, 5), newOp(5, C, 0, 1)];

async function insertTransaction(db: Queryable, tx: Tx, firstLogIndex: number): Promise<void> {
  await db.query(
    `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input, status,
       gas_used, effective_gas_price, fee, first_log_index, logs)
     values ($1, $2, $3, $4, $5, $6, $7, $8, '\\x', true, 1, 1, 1, $9, $10)`,
    [
      CHAIN,
      bytea(tx.hash),
      tx.block,
      bytea(word(tx.block)),
      1000 + tx.block,
      tx.index,
      bytea(address(0xb0)),
      bytea(address(0xe7)),
      firstLogIndex,
      bytea(logs.packLogs(LOGS)),
    ],
  );
}

/**
 * A database holding the transactions, their bundles and ops, as before 0031: written by this code
 * (later migrations change the columns it writes), then given back the index 0031 drops and 0031
 * marked pending.
 */
async function before0031(): Promise<TestDatabase> {
  const t = await createTestDatabase();
  const db = t.db;
  await db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
  await insertTransaction(db, A, 0);
  await insertTransaction(db, B, 4);
  await insertTransaction(db, C, 0);
  await userOps.insertMany(db, CHAIN, OPS, userOps.opContainers([], []));
  const bundleKeys = [...new Map(OPS.map((o) => [`${o.txHash}:${o.bundleIndex}`, o])).values()];
  await bundles.insertMany(
    db,
    CHAIN,
    bundleKeys.map((o) => ({
      txHash: o.txHash,
      bundleIndex: o.bundleIndex,
      blockNumber: o.blockNumber,
      blockTime: o.blockTime,
      entryPoint: o.entryPoint,
      entryPointVersion: o.entryPointVersion,
      bundler: o.bundler,
      beneficiary: null,
      aggregated: false,
      opsCount: OPS.filter((x) => x.txHash === o.txHash && x.bundleIndex === o.bundleIndex).length,
      opsFailed: 0,
      actualGasCostSum: 1n,
      feeShare: 0n,
    })),
  );
  await db.query(`create index user_ops_tx on user_ops (tx_hash, log_index)`);
  await db.query(`delete from schema_migrations where name like '0031%'`);
  return t;
}

/** Every read of ops by transaction, as answered. */
async function answers(db: Queryable) {
  const page = { first: 10, skip: 0 };
  const opsOf = async (tx: string) => (await userOps.listByTransaction(db, CHAIN, tx, page)).map((o) => o.id);
  const graphqlOps = (where: Record<string, unknown>) =>
    listRows(db, CHAIN, { view: ENTITIES.UserOp.view, args: { where, orderBy: 'blockNumber' }, fields: new Set(['bundleIndex']) });
  const bundleOps = listRowsPerParent(
    db,
    CHAIN,
    { view: ENTITIES.UserOp.view, args: {}, fields: new Set(['logIndex']) },
    {
      relation: ENTITIES.Bundle.relations.userOps!,
      keys: [
        [TX_A, 0, String(BLOCK)],
        [TX_A, 1, String(BLOCK)],
        [TX_B, 0, String(BLOCK)],
        [TX_C, 0, String(BLOCK + 1)],
      ],
      keyTypes: ['bytea', 'int4', 'int8'],
    },
  );
  return {
    byTransaction: [await opsOf(TX_A), await opsOf(TX_B), await opsOf(TX_C), await opsOf(word(0xd))],
    logsOfOp: (await logs.listByUserOp(db, CHAIN, word(0xab02))).map((l) => [l.logIndex, l.userOpHash]),
    logAt: await logs.find(db, CHAIN, TX_B, 4),
    latestBundles: (await bundles.listLatest(db, CHAIN, page)).map((b) => [b.transactionHash, b.bundleIndex, b.userOps]),
    graphqlByTransaction: await graphqlOps({ transactionHash: TX_A }),
    graphqlByTransactions: await graphqlOps({ transactionHash_in: [TX_B, TX_C, word(0xd)] }),
    graphqlBundleOps: await bundleOps,
  };
}

describe('migration 0031 on a populated database', function () {
  this.timeout(120_000);

  it('drops user_ops_tx; the ops of a transaction read the same, found in its block', async () => {
    const t = await before0031();
    const db = t.db;
    try {
      const before = await answers(db);
      await migrate(db);
      const { rows } = await db.query(`select 1 from pg_indexes where indexname = 'user_ops_tx'`);
      expect(rows, 'the index is gone').to.deep.equal([]);
      const after = await answers(db);
      expect(after).to.deep.equal(before);
      // What the answers hold: each transaction's ops only, though A and B share a block.
      const id = (n: number) => `${word(0xab00 + n)}-${OPS[n - 1]!.logIndex}`;
      expect(after.byTransaction).to.deep.equal([[id(3), id(2), id(1)], [id(4)], [id(5)], []]);
      expect(after.graphqlByTransaction.map((r) => r.id)).to.deep.equal([id(1), id(2), id(3)].sort());
      expect(after.graphqlByTransactions.map((r) => r.id)).to.deep.equal([id(4), id(5)]);
      expect(after.graphqlBundleOps.map((rows) => rows.map((r) => r.id))).to.deep.equal([[id(1), id(2)].sort(), [id(3)], [id(4)], [id(5)]]);
      expect(after.logAt).to.include({ logIndex: '4', transactionHash: TX_B, userOpHash: word(0xab04) });
      expect(after.logsOfOp).to.deep.equal([['1', word(0xab02)]]);
      expect(after.latestBundles.map(([, , ops]) => (ops as unknown[]).length)).to.deep.equal([1, 1, 1, 2]);
    } finally {
      await t.drop();
    }
  });

  it('refuses a database holding an op without its transaction in its block', async () => {
    for (const breakIt of [
      `delete from bundle_transactions where tx_hash = '\\x${TX_B.slice(2)}'`,
      `update user_ops set block_number = ${BLOCK + 1} where user_op_hash = '\\x${word(0xab01).slice(2)}'`,
    ]) {
      const t = await before0031();
      const db = t.db;
      try {
        await db.query(breakIt);
        const error = await migrate(db).then(
          () => null,
          (e: Error) => e,
        );
        expect(error?.message, breakIt).to.match(
          /Migration 0031_user_ops_by_transaction_block\.sql failed: .*has no bundle_transactions row for its transaction in its block/,
        );
        const { rows } = await db.query(`select 1 from pg_indexes where indexname = 'user_ops_tx'`);
        expect(rows, 'the index is kept').to.have.length(1);
      } finally {
        await t.drop();
      }
    }
  });
});
