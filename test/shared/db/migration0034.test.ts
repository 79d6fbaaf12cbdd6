/**
 * Migration 0034 on a database written before it: user_ops loses block_hash and
 * entry_point (its transaction's and bundle's) and keeps its beneficiary only where it is not its
 * bundle's. Every op reads back as before (REST mapping, webhook block hash, GraphQL fields and
 * filters, a rollback's beneficiaries and their entity stats), the indexer writes the same form, and
 * a database whose copies differ is refused.
 */
import { expect } from 'chai';
import { listRows } from '../../../server/graphql/rows.js';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import { ensureChainPartitions } from '../../../shared/db/partitions.js';
import * as entityStats from '../../../shared/db/tables/entityStats.js';
import * as userOps from '../../../shared/db/tables/userOps.js';
import * as webhookOps from '../../../shared/db/tables/webhookOps.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const CHAIN = 1;
const EP = '0x0000000071727de22e5e9d8baf0edac6f37da032';
const BUNDLER = '0x00000000000000000000000000000000000000b0';
const X = '0x00000000000000000000000000000000000000a1';
const Y = '0x00000000000000000000000000000000000000a2';
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const opHash = (n: number) => word(0x1000 + n);
const txHash = (n: number) => word(0x2000 + n);
const blockHash = (n: number) => word(0x3000 + n);
const before0034 = () => listMigrations().filter((m) => m.name < '0034');

/** A transaction with one bundle (beneficiary `beneficiary`) at block `n`, as the indexer wrote them before 0034. */
async function insertBundle(db: Queryable, n: number, beneficiary: string | null): Promise<void> {
  await db.query(
    `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input, status,
       gas_used, effective_gas_price, fee)
     values ($1, $2, $3::bigint, $4, $3::bigint * 10, 0, $5, $6, '\\x', true, 1, 1, 7)`,
    [CHAIN, bytea(txHash(n)), n, bytea(blockHash(n)), bytea(BUNDLER), bytea(EP)],
  );
  await db.query(
    `insert into bundles (chain_id, tx_hash, bundle_index, block_number, block_time, entry_point, entry_point_version, bundler, beneficiary,
       ops_count)
     values ($1, $2, 0, $3::bigint, $3::bigint * 10, $4, 'v0.7', $5, $6, 1)`,
    [CHAIN, bytea(txHash(n)), n, bytea(EP), bytea(BUNDLER), bytea(beneficiary)],
  );
}

/** An op of bundle `n` with its own copies (pre-0034 columns). */
async function insertOp(
  db: Queryable,
  n: number,
  o: { beneficiary: string | null; blockHash?: string; entryPoint?: string },
): Promise<void> {
  await db.query(
    `insert into user_ops (chain_id, user_op_hash, entry_point, entry_point_version, sender, nonce, success, actual_gas_cost,
       actual_gas_used, block_number, block_hash, block_time, tx_hash, tx_index, bundle_index, log_index, bundler, beneficiary)
     values ($1, $2, $3, 'v0.7', $4, 0, true, 5, 1, $5::bigint, $6, $5::bigint * 10, $7, 0, 0, 1, $4, $8)`,
    [
      CHAIN,
      bytea(opHash(n)),
      bytea(o.entryPoint ?? EP),
      bytea(BUNDLER),
      n,
      bytea(o.blockHash ?? blockHash(n)),
      bytea(txHash(n)),
      bytea(o.beneficiary),
    ],
  );
}

// Op n of bundle n: [op's beneficiary, bundle's beneficiary, what the row keeps after 0034].
const CASES: Array<[string | null, string | null, string | null]> = [
  [X, X, null],
  [null, null, null],
  // Its calldata not found while its bundle's other ops' was: none, where its bundle has one.
  [null, X, '0x'],
  // Matched to another handleOps call than its bundle's first op.
  [Y, X, Y],
  [Y, null, Y],
];

describe('migration 0034 on a populated database', function () {
  this.timeout(120_000);
  let t: TestDatabase;

  before(async () => {
    t = await createTestDatabase({ migrations: before0034() });
    await ensureChainPartitions(t.db, CHAIN);
    for (const [i, [op, bundle]] of CASES.entries()) {
      await insertBundle(t.db, i + 1, bundle);
      await insertOp(t.db, i + 1, { beneficiary: op });
    }
    await migrate(t.db, listMigrations());
  });
  after(async () => {
    await t?.drop();
  });

  it('drops block_hash and entry_point and keeps the beneficiary only where it is not its bundle’s', async () => {
    const { rows: columns } = await t.db.query<{ name: string }>(
      `select attname as name from pg_attribute where attrelid = 'user_ops'::regclass and attnum > 0 and not attisdropped
         and attname in ('block_hash', 'entry_point', 'beneficiary', 'beneficiary_unlike_bundle')`,
    );
    expect(columns.map((c) => c.name)).to.deep.equal(['beneficiary_unlike_bundle']);
    const { rows } = await t.db.query<{ kept: string | null }>(
      `select beneficiary_unlike_bundle as kept from user_ops where chain_id = $1 order by block_number`,
      [CHAIN],
    );
    expect(rows.map((r) => r.kept)).to.deep.equal(CASES.map(([, , kept]) => kept));
  });

  it('answers every op’s beneficiary, EntryPoint and block hash as before', async () => {
    const hashes = CASES.map((_, i) => opHash(i + 1));
    for (const [i, [beneficiary]] of CASES.entries()) {
      const op = (await userOps.findByHash(t.db, CHAIN, hashes[i]!))!;
      expect([op.beneficiary, op.entryPoint], `op ${i + 1}`).to.deep.equal([beneficiary, EP]);
    }
    const canonical = await webhookOps.listByHashes(t.db, CHAIN, hashes);
    expect(hashes.map((h) => canonical.get(h)?.blockHash)).to.deep.equal(CASES.map((_, i) => blockHash(i + 1)));
  });

  it('answers and filters the GraphQL beneficiary and entryPoint', async () => {
    const query = (where: Record<string, unknown>) =>
      listRows(t.db, CHAIN, {
        view: userOps.userOpView,
        args: { where, first: 10, orderBy: 'blockNumber', orderDirection: 'asc' },
        fields: new Set(['userOpHash', 'beneficiary', 'entryPoint']),
      });
    expect((await query({})).map((r) => r.beneficiary)).to.deep.equal(CASES.map(([beneficiary]) => beneficiary));
    expect((await query({ beneficiary: X })).map((r) => r.userOpHash)).to.deep.equal([opHash(1)]);
    expect((await query({ beneficiary: Y })).map((r) => r.userOpHash)).to.deep.equal([opHash(4), opHash(5)]);
    expect((await query({ entryPoint: EP })).length).to.equal(CASES.length);
  });

  it('recomputes the beneficiaries’ entity stats from the ops’ beneficiaries, and a rollback returns them', async () => {
    await entityStats.recompute(t.db, CHAIN, 'beneficiary', [X, Y]);
    expect((await entityStats.find(t.db, CHAIN, 'beneficiary', X))?.userOpsCount).to.equal('1');
    expect(await entityStats.find(t.db, CHAIN, 'beneficiary', Y)).to.deep.include({
      userOpsCount: '2',
      txFeeSum: '14',
      firstSeenBlock: '4',
    });
    const removed = await userOps.deleteAbove(t.db, CHAIN, 2);
    expect(removed.map((o) => o.beneficiary)).to.have.members([null, Y, Y]);
  });
});

describe('migration 0034 refuses copies that differ', function () {
  this.timeout(120_000);

  for (const [what, op] of [
    ['a block hash not its transaction’s', { beneficiary: null, blockHash: word(0xbad) }],
    ['an EntryPoint not its bundle’s', { beneficiary: null, entryPoint: '0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789' }],
  ] as const) {
    it(`an op with ${what}`, async () => {
      const t = await createTestDatabase({ migrations: before0034() });
      try {
        await ensureChainPartitions(t.db, CHAIN);
        await insertBundle(t.db, 1, null);
        await insertOp(t.db, 1, op);
        const error = await migrate(t.db, listMigrations()).then(
          () => null,
          (e: unknown) => e as Error,
        );
        expect(error?.message).to.match(/0034_op_bundle_columns.sql failed: op 0x0+1001 \(chain 1\) has no/);
        const { rows } = await t.db.query<{ n: string }>(`select count(*) as n from user_ops where block_hash is not null`);
        expect(rows[0]!.n, 'rolled back').to.equal('1');
      } finally {
        await t.drop();
      }
    });
  }
});

describe('the indexer’s rows after 0034', function () {
  this.timeout(120_000);
  let t: TestDatabase;

  before(async () => {
    t = await createTestDatabase();
    await ensureChainPartitions(t.db, CHAIN);
  });
  after(async () => {
    await t?.drop();
  });

  it('keep the beneficiary only where it is not its bundle’s, and read back as decoded', async () => {
    for (const [i, [, bundle]] of CASES.entries()) {
      await t.db.query(
        `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, input, status,
           gas_used, effective_gas_price, fee)
         values ($1, $2, $3, $4, 0, 0, $5, '\\x', true, 1, 1, 1)`,
        [CHAIN, bytea(txHash(i + 1)), i + 1, bytea(blockHash(i + 1)), bytea(BUNDLER)],
      );
      await t.db.query(
        `insert into bundles (chain_id, tx_hash, bundle_index, block_number, block_time, entry_point, entry_point_version, bundler,
           beneficiary, ops_count)
         values ($1, $2, 0, $3, 0, $4, 'v0.7', $5, $6, 1)`,
        [CHAIN, bytea(txHash(i + 1)), i + 1, bytea(EP), bytea(BUNDLER), bytea(bundle)],
      );
    }
    const ops = CASES.map(([beneficiary], i) => newOp(i + 1, beneficiary));
    const containers = userOps.opContainers(
      [],
      CASES.map(([, beneficiary], i) => ({ txHash: txHash(i + 1), bundleIndex: 0, beneficiary })),
    );
    await userOps.insertMany(t.db, CHAIN, ops.slice(0, 3), containers);
    await userOps.appendMany(t.db, CHAIN, ops.slice(3), containers);
    const { rows } = await t.db.query<{ kept: string | null }>(
      `select beneficiary_unlike_bundle as kept from user_ops where chain_id = $1 order by block_number`,
      [CHAIN],
    );
    expect(rows.map((r) => r.kept)).to.deep.equal(CASES.map(([, , kept]) => kept));
    const stored = await userOps.listStoredByHashes(
      t.db,
      CHAIN,
      ops.map((o) => o.userOpHash),
    );
    expect(stored.map((o) => [o.beneficiary, o.entry_point, o.block_hash])).to.deep.equal(
      [...ops].reverse().map((o) => [o.beneficiary, EP, o.blockHash]),
    );
  });
});

/** The fields of an op decoded from its events alone that are null: nothing from calldata. */
const UNDECODED = (
  'paymaster failure revertReason revertMessage opIndex opAt factory aggregator initCode callData signature ' +
  'paymasterAndData callGasLimit verificationGasLimit preVerificationGas maxFeePerGas maxPriorityFeePerGas paymasterVerificationGasLimit paymasterPostOpGasLimit accountGasLimits gasFees paymasterSignature target'
).split(' ') as Array<keyof userOps.NewUserOp>;

function newOp(n: number, beneficiary: string | null): userOps.NewUserOp {
  const none = Object.fromEntries(UNDECODED.map((k) => [k, null])) as Record<keyof userOps.NewUserOp, null>;
  return {
    ...none,
    userOpHash: opHash(n),
    entryPoint: EP,
    entryPointVersion: 'v0.7',
    sender: BUNDLER,
    nonce: 0n,
    success: true,
    actualGasCost: 1n,
    actualGasUsed: 1n,
    blockNumber: n,
    blockHash: blockHash(n),
    blockTime: 0,
    txHash: txHash(n),
    txIndex: 0,
    bundleIndex: 0,
    logIndex: 1,
    execLogFrom: 0,
    execLogTo: 1,
    bundler: BUNDLER,
    beneficiary,
    decodeStatus: 'calldata_missing',
    eip7702: false,
    calls: [],
  };
}
