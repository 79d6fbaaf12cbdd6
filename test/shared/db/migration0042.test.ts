/**
 * Migration 0042 on a database written before it: each stored bundle gets its share of its
 * transaction's fee by the indexer's rule (indexer/decode/bundleFees.ts) — the whole fee alone in
 * its transaction, a split in proportion to revenue (or equal parts without revenue) that adds up
 * to the fee when several share one — and the per-day fees and per-bundler days are built from them.
 */
import { expect } from 'chai';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import { bytea } from '../../../shared/db/client.js';
import { feeShares } from '../../../indexer/decode/bundleFees.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const CHAIN = 8453;
const DAY = 20_000;
const hash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;
const address = (n: number): string => `0x${n.toString(16).padStart(40, '0')}`;
const BUNDLER_A = address(0xa1);
const BUNDLER_B = address(0xb2);

/** Transactions and their bundles' revenues, as stored before the migration. */
const TXS = [
  { hash: hash(1), block: 10, day: DAY, bundler: BUNDLER_A, fee: 1_000n, revenues: [1_500n] },
  { hash: hash(2), block: 11, day: DAY, bundler: BUNDLER_A, fee: 1_000n, revenues: [1n, 2n, 0n] },
  { hash: hash(3), block: 12, day: DAY + 1, bundler: BUNDLER_B, fee: 1_001n, revenues: [0n, 0n] },
  { hash: hash(4), block: 13, day: DAY + 1, bundler: BUNDLER_A, fee: 7_000n, revenues: [3_000n] },
];

describe('migration 0042 (bundle economics)', () => {
  let t: TestDatabase;

  before(async () => {
    t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0042') });
    await t.db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
    for (const tx of TXS) {
      const time = tx.day * 86400 + tx.block;
      await t.db.query(
        `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input,
           status, gas_used, effective_gas_price, fee, first_log_index, logs)
         values ($1, $2, $3, $4, $5, 0, $6, $6, '\\x', true, 1, 1, $7, 0, '\\x')`,
        [CHAIN, bytea(tx.hash), tx.block, bytea(hash(tx.block)), time, bytea(tx.bundler), tx.fee.toString()],
      );
      for (const [index, revenue] of tx.revenues.entries()) {
        await t.db.query(
          `insert into bundles (chain_id, tx_hash, bundle_index, block_number, block_time, entry_point, entry_point_version, bundler,
             beneficiary, aggregated, ops_count, ops_failed, actual_gas_cost_sum)
           values ($1, $2, $3, $4, $5, $6, 'v0.7', $7, null, false, 1, 0, $8)`,
          [CHAIN, bytea(tx.hash), index, tx.block, time, bytea(address(0xe7)), bytea(tx.bundler), revenue.toString()],
        );
      }
    }
    for (const day of [DAY, DAY + 1]) {
      await t.db.query(`insert into daily_stats (chain_id, day, user_ops, bundles) values ($1, $2, 1, 1)`, [CHAIN, day]);
    }
    await migrate(t.db);
  });
  after(async () => t?.drop());

  it("gives each stored bundle its share of its transaction's fee, the shares adding up to the fee", async () => {
    for (const tx of TXS) {
      const { rows } = await t.db.query<{ fee_share: string }>(
        `select fee_share::text from bundles where chain_id = $1 and tx_hash = $2 order by bundle_index`,
        [CHAIN, bytea(tx.hash)],
      );
      const shares = rows.map((r) => BigInt(r.fee_share));
      expect(shares, tx.hash).to.deep.equal(feeShares(tx.fee, tx.revenues));
      expect(shares.reduce((a, b) => a + b, 0n)).to.equal(tx.fee);
    }
    // The rule itself: proportional, rounded down, the last taking the rest; equal parts without revenue.
    expect(feeShares(1_000n, [1n, 2n, 0n])).to.deep.equal([333n, 666n, 1n]);
    expect(feeShares(1_001n, [0n, 0n])).to.deep.equal([500n, 501n]);
  });

  it('stores the fees of each day and each bundler day', async () => {
    const { rows: days } = await t.db.query<{ day: number; bundle_fees: string }>(
      `select day, bundle_fees::text from daily_stats where chain_id = $1 order by day`,
      [CHAIN],
    );
    expect(days).to.deep.equal([
      { day: DAY, bundle_fees: '2000' },
      { day: DAY + 1, bundle_fees: '8001' },
    ]);
    const { rows } = await t.db.query<{ bundler: string; day: number; bundles: string; revenue: string; fees: string }>(
      `select bundler, day, bundles::text, revenue::text, fees::text from bundler_days where chain_id = $1 order by day, bundler`,
      [CHAIN],
    );
    expect(rows).to.deep.equal([
      { bundler: BUNDLER_A, day: DAY, bundles: '4', revenue: '1503', fees: '2000' },
      { bundler: BUNDLER_A, day: DAY + 1, bundles: '1', revenue: '3000', fees: '7000' },
      { bundler: BUNDLER_B, day: DAY + 1, bundles: '2', revenue: '0', fees: '1001' },
    ]);
  });
});
