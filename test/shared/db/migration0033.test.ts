/**
 * An op's calls without a second copy of their bytes (migration 0033): each call's data kept as
 * its place in the op's callData (in its column or in the transaction's input) only when it reads
 * back exactly, the targets concatenated, zero values not stored; written so by the indexer,
 * converted so in place, and answered as before (REST, GraphQL `value`, SQL opscan_op_calls).
 */
import { expect } from 'chai';
import { Interface } from 'ethers';
import { ENTRY_POINT_V07 } from '../../../indexer/decode/abi.js';
import { decoderFor } from '../../../indexer/decode/entryPointDecoder.js';
import { listRows } from '../../../server/graphql/rows.js';
import { decodeAccountCalls, type AccountCall } from '../../../shared/calldata/accountCalls.js';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import { ensureChainPartitions } from '../../../shared/db/partitions.js';
import { opCallsSql } from '../../../shared/db/tables/userOpCalls.js';
import * as userOps from '../../../shared/db/tables/userOps.js';
import { byteaArray } from '../../../shared/db/unnest.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { BENEFICIARY, CHAIN, EP_V07, hashOf, insertTransaction, newOp, word } from '../support/storedOps.js';

const ACCOUNT = new Interface(['function execute(address,uint256,bytes)', 'function executeBatch(address[],uint256[],bytes[])']);
const T1 = '0x' + '11'.repeat(20);
const T2 = '0x' + '22'.repeat(20);
const TRANSFER = '0xa9059cbb' + 'ab'.repeat(64);
const single = ACCOUNT.encodeFunctionData('execute', [T1, 0, TRANSFER]).toLowerCase();
const batch = ACCOUNT.encodeFunctionData('executeBatch', [
  [T1, T2],
  [5n * 10n ** 30n, 0],
  ['0x', '0xdeadbeef'],
]).toLowerCase();
const TX = word(0x707);

/** A handleOps of one op calling execute: its struct, as the indexer decodes it. */
function bundle() {
  const op = ['0x00000000000000000000000000000000000000a1', 1, '0x', single, word(1), 21000, word(2), '0x', '0x' + '11'.repeat(65)];
  const input = ENTRY_POINT_V07.encodeFunctionData('handleOps', [[op], BENEFICIARY]).toLowerCase();
  return { input, op: decoderFor('v0.7').decodeHandleOps(input)!.ops[0]! };
}

/**
 * The ops: 1 keeps its callData in the input, its call a slice of it; 2 keeps its callData in its
 * column, two calls (a value, an empty data); 3's call is not in its callData; 4 has no calls.
 */
function ops(): userOps.NewUserOp[] {
  const { op } = bundle();
  const withCalls = (n: number, callData: string, calls: AccountCall[], opAt: number | null): userOps.NewUserOp => ({
    ...newOp({ ...op, callData }, 'v0.7', TX, n),
    opAt,
    calls,
    target: calls[0]?.target ?? null,
  });
  return [
    withCalls(1, single, decodeAccountCalls(single), op.structAt + 4),
    withCalls(2, batch, decodeAccountCalls(batch), null),
    withCalls(3, single, [{ target: T2, value: 7n, data: '0x1234' }], null),
    withCalls(4, '0x', [], null),
  ];
}

type RawCalls = { calls_target: string | null; calls_value: string | null; calls_data: string[] | null; calls_data_at: string | null };

async function rawCalls(db: Queryable, n: number): Promise<RawCalls> {
  const { rows } = await db.query<RawCalls>(
    `select calls_target, calls_value::text as calls_value, calls_data, calls_data_at from user_ops where chain_id = $1 and user_op_hash = $2`,
    [CHAIN, bytea(hashOf(n))],
  );
  return rows[0]!;
}

const place = (at: number, length: number) => at.toString(16).padStart(8, '0') + length.toString(16).padStart(8, '0');
const at = (callData: string, data: string) => callData.slice(2).indexOf(data.slice(2)) / 2;
const EXPECTED_RAW: RawCalls[] = [
  { calls_target: T1, calls_value: null, calls_data: null, calls_data_at: `0x${place(at(single, TRANSFER), 68)}` },
  {
    calls_target: `${T1}${T2.slice(2)}`,
    calls_value: `{${5n * 10n ** 30n},0}`,
    calls_data: null,
    calls_data_at: `0x${place(0, 0)}${place(at(batch, '0xdeadbeef'), 4)}`,
  },
  { calls_target: T2, calls_value: '{7}', calls_data: ['0x1234'], calls_data_at: null },
  { calls_target: null, calls_value: null, calls_data: null, calls_data_at: null },
];

/** What the answers and SQL say of each op's calls. */
async function expectAnswered(db: Queryable): Promise<void> {
  for (const [i, op] of ops().entries()) {
    const want = op.calls.map((c) => ({ target: c.target, value: c.value.toString(), data: c.data }));
    const answered = (await userOps.findByHash(db, CHAIN, op.userOpHash))!;
    expect(
      answered.targets.map((target, k) => ({ target, value: answered.values[k], data: answered.callDatas[k] })),
      `op ${i + 1}`,
    ).to.deep.equal(want);
    expect(answered.callData).to.equal(want[0]?.data ?? op.callData);
    const { rows } = await db.query<{ target: string; value: string; data: string }>(
      `select c.target, c.value::text as value, c.data from user_ops u cross join lateral ${opCallsSql('u')} c
       where u.chain_id = $1 and u.user_op_hash = $2 order by c.call_index`,
      [CHAIN, bytea(op.userOpHash)],
    );
    expect(rows, `op ${i + 1} in SQL`).to.deep.equal(want);
  }
  const query = (where: Record<string, unknown>) =>
    listRows(db, CHAIN, {
      view: userOps.userOpView,
      args: { where, first: 10, orderBy: 'logIndex', orderDirection: 'asc' },
      fields: new Set(['userOpHash', 'value']),
    });
  expect((await query({})).map((r) => r.value)).to.deep.equal(['0', (5n * 10n ** 30n).toString(), '7', null]);
  expect((await query({ value_gt: '0' })).map((r) => r.userOpHash)).to.deep.equal([hashOf(2), hashOf(3)]);
  expect((await query({ value: '0' })).map((r) => r.userOpHash)).to.deep.equal([hashOf(1)]);
}

describe('an op’s calls kept as slices of its callData (migration 0033)', function () {
  this.timeout(120_000);

  describe('written by the indexer', () => {
    let t: TestDatabase;
    before(async () => {
      t = await createTestDatabase();
      await ensureChainPartitions(t.db, CHAIN);
      const { input } = bundle();
      await insertTransaction(t.db, { tx: TX, txIndex: 0, to: EP_V07, input });
      const [first, ...rest] = ops();
      await userOps.appendMany(t.db, CHAIN, [first!], userOps.opContainers([{ txHash: TX, input }], []));
      await userOps.insertMany(t.db, CHAIN, rest, userOps.opContainers([{ txHash: TX, input }], []));
    });
    after(async () => {
      await t?.drop();
    });

    it('stores each call’s data as its place in the op’s callData only where it reads back, no zero values, one bytea of targets', async () => {
      for (const [i, want] of EXPECTED_RAW.entries()) expect(await rawCalls(t.db, i + 1), `op ${i + 1}`).to.deep.equal(want);
    });

    it('answers every call as decoded (REST, GraphQL value and its filters, SQL)', async () => {
      await expectAnswered(t.db);
    });
  });

  describe('migrated in place', () => {
    let t: TestDatabase;
    before(async () => {
      t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0033') });
      await ensureChainPartitions(t.db, CHAIN);
      const { input } = bundle();
      await insertTransaction(t.db, { tx: TX, txIndex: 0, to: EP_V07, input });
      // Its bundle, which migration 0034 checks the ops' copies against.
      await t.db.query(
        `insert into bundles (chain_id, tx_hash, bundle_index, block_number, block_time, entry_point, entry_point_version, bundler, ops_count)
         values ($1, $2, 0, 10, 1000, $3, 'v0.7', $4, $5)`,
        [CHAIN, bytea(TX), bytea(EP_V07), bytea(BENEFICIARY), ops().length],
      );
      // The ops as 0024–0029 stored them: three arrays of every call (op 1's callData only in the input).
      for (const op of ops()) {
        await t.db.query(
          `insert into user_ops (chain_id, user_op_hash, entry_point, entry_point_version, sender, nonce, success, actual_gas_cost,
             actual_gas_used, block_number, block_hash, block_time, tx_hash, tx_index, bundle_index, log_index, bundler, op_at, call_data,
             target, calls_target, calls_value, calls_data)
           values ($1, $2, $3, 'v0.7', $4, 1, true, 1, 1, 10, $5, 1000, $6, 0, 0, $7, $8, $9, $10, $11, $12::text::bytea[],
             $13::text::numeric[], $14::text::bytea[])`,
          [
            CHAIN,
            bytea(op.userOpHash),
            bytea(EP_V07),
            bytea(op.sender),
            bytea(word(10)),
            bytea(TX),
            op.logIndex,
            bytea(BENEFICIARY),
            op.opAt,
            op.opAt === null ? bytea(op.callData) : null,
            bytea(op.target),
            byteaArray(op.calls.map((c) => c.target)),
            `{${op.calls.map((c) => c.value.toString()).join(',')}}`,
            byteaArray(op.calls.map((c) => c.data)),
          ],
        );
      }
      await migrate(t.db, listMigrations());
    });
    after(async () => {
      await t?.drop();
    });

    it('converts each op’s calls to the form the indexer writes', async () => {
      for (const [i, want] of EXPECTED_RAW.entries()) expect(await rawCalls(t.db, i + 1), `op ${i + 1}`).to.deep.equal(want);
    });

    it('answers every call as before', async () => {
      await expectAnswered(t.db);
    });
  });
});
