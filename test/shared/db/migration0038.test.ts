/**
 * Migration 0038 on a database written before it: the known addresses it holds are read whole at
 * the indexer's first start (no filter stored yet), which stores its filter; the next start reads
 * that filter and only the addresses first seen above its block; a reorg below that block lowers
 * it. The index the reads above a block use is there, and a network's stored filter goes with its
 * parts.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import { KnownAddressSet } from '../../../indexer/sync/knownAddressSet.js';
import * as indexerState from '../../../shared/db/tables/indexerState.js';
import * as knownAddressFilters from '../../../shared/db/tables/knownAddressFilters.js';
import * as knownAddresses from '../../../shared/db/tables/knownAddresses.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

const CHAIN = 8453;
const randomAddress = (): string => `0x${randomBytes(20).toString('hex')}`;

describe('migration 0038 (known address filters)', () => {
  let t: TestDatabase;
  const written = Array.from({ length: 2_000 }, randomAddress);

  before(async () => {
    t = await createTestDatabase({ migrations: listMigrations().filter((m) => m.name < '0038') });
    await indexerState.insertIfMissing(t.db, { chainId: CHAIN, network: 'base', startBlock: 1 });
    // The cursor at block 9, written as the schema before it has it (the module writes today's).
    await t.db.query(
      `update indexer_state set indexed_block = 9, indexed_block_hash = decode($2, 'hex'), head_block = 9, backfill_complete = true
       where chain_id = $1`,
      [CHAIN, '09'.repeat(32)],
    );
    await knownAddresses.insertMany(
      t.db,
      CHAIN,
      written.map((address, i) => ({ address, firstBlock: 1 + (i % 9), backfillTo: null })),
    );
    await migrate(t.db);
  });
  after(async () => t?.drop());

  it('reads the addresses written before it at the first start, then the filter that start stored', async () => {
    const first = new KnownAddressSet(t.db, CHAIN, 1_000);
    expect(await first.load()).to.deep.include({ addresses: 2_000, stored: false, readAddresses: 2_000 });
    expect(await first.saveWhenDue((await indexerState.findCursor(t.db, CHAIN))!)).to.equal(true);

    const later = randomAddress();
    await knownAddresses.insertMany(t.db, CHAIN, [{ address: later, firstBlock: 10, backfillTo: 9 }]);
    const next = new KnownAddressSet(t.db, CHAIN, 1_000);
    expect(await next.load()).to.deep.include({ addresses: 2_001, stored: true, readAddresses: 1 });
    for (const a of [...written, later]) if (!next.mayBeKnown(a)) expect.fail(`${a} lost`);

    await knownAddresses.deleteAbove(t.db, CHAIN, 4);
    expect((await knownAddressFilters.find(t.db, CHAIN))?.throughBlock).to.equal(4);
  });

  it("has the index the reads above a block use, and drops a filter's parts with it", async () => {
    const { rows } = await t.db.query<{ indexdef: string }>(
      `select indexdef from pg_indexes where indexname = 'known_addresses_first_seen'`,
    );
    expect(rows[0]?.indexdef).to.match(/\(chain_id, first_block\)/);
    await t.db.query(`delete from known_address_filters where chain_id = $1`, [CHAIN]);
    const parts = await t.db.query<{ n: string }>(`select count(*) as n from known_address_filter_parts where chain_id = $1`, [CHAIN]);
    expect(Number(parts.rows[0]!.n)).to.equal(0);
    expect(await knownAddressFilters.find(t.db, CHAIN)).to.equal(null);
  });
});
