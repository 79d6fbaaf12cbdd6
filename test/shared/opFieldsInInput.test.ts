/**
 * An op's own bytes kept once, in its bundle transaction's input (at `op_at`): stored there
 * only when they read back exactly (the write-side check), filled back on every read, filterable in
 * GraphQL, and converted in place by the migration only where equal.
 */
import { expect } from 'chai';
import { ENTRY_POINT_V06, ENTRY_POINT_V07 } from '../../indexer/decode/abi.js';
import { decoderFor, type CalldataOp } from '../../indexer/decode/entryPointDecoder.js';
import { listRows } from '../../server/graphql/rows.js';
import { bytea, type Queryable } from '../../shared/db/client.js';
import { listMigrations, migrate } from '../../shared/db/migrate.js';
import { ensureChainPartitions } from '../../shared/db/partitions.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import {
  BENEFICIARY,
  CHAIN,
  EP_V06,
  EP_V07,
  hashOf,
  insertTransaction as insertBundleTransaction,
  newOp,
  word,
} from './support/storedOps.js';

/** A v0.7 handleOps of two ops and a v0.6 handleOps of one, each with its decoded ops. */
function bundleInputs() {
  const packed = (sender: string, nonce: number, callData: string) => [
    sender,
    nonce,
    '0x',
    callData,
    word(0x1234_0000_5678),
    21000,
    word(0x9_0000_000a),
    '0x00000000000000000000000000000000000000aa0000000000000000000000000000c350',
    '0x' + '11'.repeat(65),
  ];
  const v07 = ENTRY_POINT_V07.encodeFunctionData('handleOps', [
    [
      packed('0x00000000000000000000000000000000000000a1', 1, '0xb61d27f6' + 'ee'.repeat(100)),
      packed('0x00000000000000000000000000000000000000a2', 2, '0x'),
    ],
    BENEFICIARY,
  ]);
  const v06 = ENTRY_POINT_V06.encodeFunctionData('handleOps', [
    [['0x00000000000000000000000000000000000000a3', 3, '0x' + 'fa'.repeat(40), '0xdeadbeef', 1, 2, 3, 4, 5, '0x', '0x' + '22'.repeat(65)]],
    BENEFICIARY,
  ]);
  return {
    v07: { input: v07.toLowerCase(), ops: decoderFor('v0.7').decodeHandleOps(v07)!.ops },
    v06: { input: v06.toLowerCase(), ops: decoderFor('v0.6').decodeHandleOps(v06)!.ops },
  };
}

const TX_V07 = word(0x707);
const TX_V06 = word(0x606);

const insertTransaction = (db: Queryable, tx: string, to: string, input: string) =>
  insertBundleTransaction(db, { tx, txIndex: tx === TX_V07 ? 0 : 1, to, input });

/** The transaction's one bundle, of the EntryPoint its ops name (an op's row leaves it to its bundle). */
async function insertBundle(db: Queryable, tx: string, entryPoint: string): Promise<void> {
  await db.query(
    `insert into bundles (chain_id, tx_hash, bundle_index, block_number, block_time, entry_point, entry_point_version, bundler, beneficiary,
       ops_count)
     values ($1, $2, 0, 10, 1000, $3, $4, $5, $5, 1)`,
    [CHAIN, bytea(tx), bytea(entryPoint), entryPoint === EP_V06 ? 'v0.6' : 'v0.7', bytea(BENEFICIARY)],
  );
}

type RawFields = {
  op_at: number | null;
  init_code: string | null;
  call_data: string | null;
  paymaster_and_data: string | null;
  signature: string | null;
  account_gas_limits: string | null;
  gas_fees: string | null;
};

async function rawFields(db: Queryable, n: number): Promise<RawFields> {
  const { rows } = await db.query<RawFields>(
    `select op_at, init_code, call_data, paymaster_and_data, signature, account_gas_limits, gas_fees from user_ops
     where chain_id = $1 and user_op_hash = $2`,
    [CHAIN, bytea(hashOf(n))],
  );
  return rows[0]!;
}

const NULL_FIELDS = {
  init_code: null,
  call_data: null,
  paymaster_and_data: null,
  signature: null,
  account_gas_limits: null,
  gas_fees: null,
};

/** What an answer says of the op's input fields. */
async function answered(db: Queryable, n: number) {
  const op = (await userOps.findByHash(db, CHAIN, hashOf(n)))!;
  return {
    initCode: op.initCode,
    callData: op.preDecodedCallData,
    paymasterAndData: op.paymasterAndData,
    signature: op.signature,
    accountGasLimits: op.accountGasLimits,
    gasFees: op.gasFees,
  };
}

const decodedFields = (c: CalldataOp) => ({
  initCode: c.initCode,
  callData: c.callData,
  paymasterAndData: c.paymasterAndData,
  signature: c.signature,
  accountGasLimits: c.accountGasLimits,
  gasFees: c.gasFees,
});

describe('an op’s bytes kept in its transaction’s input (op_at)', function () {
  this.timeout(120_000);
  const bundlesOf = bundleInputs();

  describe('written by the indexer', () => {
    let t: TestDatabase;
    const { v07, v06 } = bundlesOf;
    const changed = { ...v07.ops[1]!, callData: '0x01' };

    before(async () => {
      t = await createTestDatabase();
      await ensureChainPartitions(t.db, CHAIN);
      await insertTransaction(t.db, TX_V07, EP_V07, v07.input);
      await insertTransaction(t.db, TX_V06, EP_V06, v06.input);
      await insertBundle(t.db, TX_V07, EP_V07);
      await insertBundle(t.db, TX_V06, EP_V06);
      const containers = userOps.opContainers(
        [
          { txHash: TX_V07, input: v07.input },
          { txHash: TX_V06, input: v06.input },
        ],
        [],
      );
      await userOps.insertMany(
        t.db,
        CHAIN,
        [
          newOp(v07.ops[0]!, 'v0.7', TX_V07, 1),
          // Its callData differs from what the input holds at its offset: kept in its columns.
          newOp(changed, 'v0.7', TX_V07, 2),
          { ...newOp(v07.ops[1]!, 'v0.7', TX_V07, 3), opAt: 1_000_000 },
        ],
        containers,
      );
      await userOps.appendMany(t.db, CHAIN, [newOp(v06.ops[0]!, 'v0.6', TX_V06, 4)], containers);
    });
    after(async () => {
      await t?.drop();
    });

    it('stores an op read back exactly from the input with op_at and without its columns, and answers it whole', async () => {
      expect(await rawFields(t.db, 1)).to.deep.equal({ op_at: v07.ops[0]!.structAt + 4, ...NULL_FIELDS });
      expect(await rawFields(t.db, 4)).to.deep.equal({ op_at: v06.ops[0]!.structAt + 4, ...NULL_FIELDS });
      expect(await answered(t.db, 1)).to.deep.equal(decodedFields(v07.ops[0]!));
      expect(await answered(t.db, 4)).to.deep.equal(decodedFields(v06.ops[0]!));
    });

    it('keeps the columns of an op whose bytes differ from the input at its offset, or whose offset is outside it', async () => {
      const stored = decodedFields(changed);
      expect(await rawFields(t.db, 2)).to.deep.equal({
        op_at: null,
        init_code: stored.initCode,
        call_data: '0x01',
        paymaster_and_data: stored.paymasterAndData,
        signature: stored.signature,
        account_gas_limits: stored.accountGasLimits,
        gas_fees: stored.gasFees,
      });
      expect(await answered(t.db, 2)).to.deep.equal(stored);
      expect((await rawFields(t.db, 3)).op_at).to.equal(null);
      expect(await answered(t.db, 3)).to.deep.equal(decodedFields(v07.ops[1]!));
    });

    it('filters and answers the fields in GraphQL from the input', async () => {
      const fields = new Set(['userOpHash', 'callData', 'initCode', 'paymasterAndData', 'signature', 'accountGasLimits', 'gasFees']);
      const query = (where: Record<string, unknown>) =>
        listRows(t.db, CHAIN, { view: userOps.userOpView, args: { where, first: 10, orderBy: 'logIndex', orderDirection: 'asc' }, fields });
      const first = v07.ops[0]!;
      expect(await query({ callData: first.callData })).to.deep.equal([
        {
          id: `${hashOf(1)}-1`,
          userOpHash: hashOf(1),
          ...decodedFields(first),
        },
      ]);
      expect((await query({ callData_contains: '0xb61d27f6' })).map((r) => r.userOpHash)).to.deep.equal([hashOf(1)]);
      expect((await query({ callData: '0x01' })).map((r) => r.userOpHash)).to.deep.equal([hashOf(2)]);
      const v06Rows = await query({ signature: v06.ops[0]!.signature });
      expect(v06Rows.map((r) => [r.userOpHash, r.initCode, r.accountGasLimits, r.gasFees])).to.deep.equal([
        [hashOf(4), v06.ops[0]!.initCode, null, null],
      ]);
    });
  });

  describe('migrated in place', () => {
    let t: TestDatabase;
    const { v07, v06 } = bundlesOf;
    const OTHER_TO = '0x00000000000000000000000000000000000000cc';
    const TX_ELSEWHERE = word(0x999);

    before(async () => {
      t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0028') });
      await ensureChainPartitions(t.db, CHAIN);
      await insertTransaction(t.db, TX_V07, EP_V07, v07.input);
      await insertTransaction(t.db, TX_V06, EP_V06, v06.input);
      await insertBundle(t.db, TX_V07, EP_V07);
      await insertBundle(t.db, TX_V06, EP_V06);
      // The same handleOps input sent to another contract: not a direct call of the op's EntryPoint.
      await t.db.query(
        `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input, status,
           gas_used, effective_gas_price, fee)
         values ($1, $2, 10, $3, 1000, 2, $4, $5, $6, true, 1, 1, 1)`,
        [CHAIN, bytea(TX_ELSEWHERE), bytea(word(10)), bytea(BENEFICIARY), bytea(OTHER_TO), bytea(v07.input)],
      );
      await insertBundle(t.db, TX_ELSEWHERE, EP_V07);
      const insert = (o: userOps.NewUserOp) =>
        t.db.query(
          `insert into user_ops (chain_id, user_op_hash, entry_point, entry_point_version, sender, nonce, success, actual_gas_cost,
             actual_gas_used, block_number, block_hash, block_time, tx_hash, tx_index, bundle_index, log_index, bundler, op_index,
             init_code, call_data, paymaster_and_data, signature, account_gas_limits, gas_fees)
           values ($1, $2, $3, $4, $5, $6, true, 1, 1, 10, $7, 1000, $8, 0, 0, $9, $7, $10, $11, $12, $13, $14, $15, $16)`,
          [
            CHAIN,
            bytea(o.userOpHash),
            bytea(o.entryPoint),
            o.entryPointVersion,
            bytea(o.sender),
            o.nonce.toString(),
            bytea(word(10)),
            bytea(o.txHash),
            o.logIndex,
            o.opIndex,
            bytea(o.initCode),
            bytea(o.callData),
            bytea(o.paymasterAndData),
            bytea(o.signature),
            bytea(o.accountGasLimits),
            bytea(o.gasFees),
          ],
        );
      await insert(newOp(v07.ops[0]!, 'v0.7', TX_V07, 1));
      await insert(newOp({ ...v07.ops[1]!, signature: '0x1234' }, 'v0.7', TX_V07, 2));
      await insert(newOp(v06.ops[0]!, 'v0.6', TX_V06, 3));
      await insert(newOp(v07.ops[0]!, 'v0.7', TX_ELSEWHERE, 4));
      // Stored before its calldata was decoded: nothing to compare, nothing moved.
      await insert({
        ...newOp(v07.ops[1]!, 'v0.7', TX_V07, 5),
        opIndex: null,
        initCode: null,
        callData: null,
        paymasterAndData: null,
        signature: null,
        accountGasLimits: null,
        gasFees: null,
      });
      await migrate(t.db, listMigrations());
    });
    after(async () => {
      await t?.drop();
    });

    it('sets op_at and drops the columns only where every field reads back equal from a direct handleOps input', async () => {
      expect(await rawFields(t.db, 1)).to.deep.equal({ op_at: v07.ops[0]!.structAt + 4, ...NULL_FIELDS });
      expect(await rawFields(t.db, 3)).to.deep.equal({ op_at: v06.ops[0]!.structAt + 4, ...NULL_FIELDS });
      expect((await rawFields(t.db, 2)).op_at).to.equal(null);
      expect((await rawFields(t.db, 2)).signature).to.equal('0x1234');
      expect((await rawFields(t.db, 4)).op_at).to.equal(null);
      expect((await rawFields(t.db, 4)).call_data).to.equal(v07.ops[0]!.callData);
      expect(await rawFields(t.db, 5)).to.deep.equal({ op_at: null, ...NULL_FIELDS });
    });

    it('answers every op as before', async () => {
      expect(await answered(t.db, 1)).to.deep.equal(decodedFields(v07.ops[0]!));
      expect(await answered(t.db, 2)).to.deep.equal({ ...decodedFields(v07.ops[1]!), signature: '0x1234' });
      expect(await answered(t.db, 3)).to.deep.equal(decodedFields(v06.ops[0]!));
      expect(await answered(t.db, 4)).to.deep.equal(decodedFields(v07.ops[0]!));
      expect(await answered(t.db, 5)).to.deep.equal({
        initCode: null,
        callData: '0x',
        paymasterAndData: null,
        signature: null,
        accountGasLimits: null,
        gasFees: null,
      });
    });
  });
});
