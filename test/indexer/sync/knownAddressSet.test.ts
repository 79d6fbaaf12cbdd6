/**
 * Known addresses without the heap (INDEXER_TRANSFERS=known): the Bloom filter never says "absent"
 * for an address it holds and lets through about 1 % of the others; the set built from the table
 * answers exactly (the table settles what the filter lets through), counts what decoded ranges made
 * known before their batch commits; the growing filter keeps its rate past its first capacity.
 * The filter stored in known_address_filters is read back with only the addresses first seen above
 * its block, a reorg below that block (the real rollback) makes the next load read what the
 * re-indexed blocks made known, and a save finding the cursor moved leaves the stored one as it was.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { rollbackTo } from '../../../indexer/persist/rollback.js';
import * as indexerState from '../../../shared/db/tables/indexerState.js';
import * as knownAddressFilters from '../../../shared/db/tables/knownAddressFilters.js';
import * as knownAddresses from '../../../shared/db/tables/knownAddresses.js';
import { AddressBloomFilter, FILTER_LAYOUT, GrowingAddressFilter } from '../../../indexer/sync/addressBloomFilter.js';
import { KnownAddressSet } from '../../../indexer/sync/knownAddressSet.js';
import type { Db } from '../../../shared/db/client.js';
import { useTestDb } from '../../helpers/db.js';

const randomAddress = (): string => `0x${randomBytes(20).toString('hex')}`;
const vanity = (i: number): string => `0x00000000${i.toString(16).padStart(32, '0')}`;

describe('sync/AddressBloomFilter', () => {
  it('holds every address added (random and vanity alike) and lets through about 1 % of others at capacity', () => {
    const filter = new AddressBloomFilter(20_000);
    const added = [...Array.from({ length: 10_000 }, randomAddress), ...Array.from({ length: 10_000 }, (_, i) => vanity(i))];
    for (const a of added) filter.add(a);
    for (const a of added) expect(filter.mayContain(a), a).to.equal(true);
    const others = [...Array.from({ length: 10_000 }, randomAddress), ...Array.from({ length: 10_000 }, (_, i) => vanity(100_000 + i))];
    const falsePositives = others.filter((a) => filter.mayContain(a)).length / others.length;
    expect(falsePositives).to.be.below(0.03);
    expect(filter.bytes).to.be.below(20_000 * 1.3);
  });
});

describe('sync/KnownAddressSet', () => {
  const t = useTestDb();
  const chainId = 8453;

  it('answers exactly from the filter and the table, counts uncommitted ranges, and forgets them on a reorg', async () => {
    const stored = Array.from({ length: 5_000 }, randomAddress);
    await knownAddresses.insertMany(
      t.db,
      chainId,
      stored.map((address) => ({ address, firstBlock: 1, backfillTo: 0 })),
    );
    const set = new KnownAddressSet(t.db, chainId);
    expect(await set.load()).to.include({ addresses: 5_000 });
    const strangers = Array.from({ length: 5_000 }, randomAddress);
    const known = await set.knownAmong([...stored.slice(0, 100), ...strangers]);
    expect([...known].sort()).to.deep.equal(stored.slice(0, 100).sort());

    const fresh = [randomAddress(), randomAddress()];
    set.add(fresh);
    expect([...(await set.knownAmong([...fresh, strangers[0]!]))].sort()).to.deep.equal([...fresh].sort());
    // Committed: the table answers for it from now on.
    await knownAddresses.insertMany(t.db, chainId, [{ address: fresh[0]!, firstBlock: 2, backfillTo: 1 }]);
    set.committed([fresh[0]!]);
    set.forgetUncommitted();
    expect([...(await set.knownAmong(fresh))]).to.deep.equal([fresh[0]]);
  });

  it('reads the table in pages (one value each, and where the next starts)', async () => {
    const other = 1;
    const addresses = Array.from({ length: 450_001 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    await t.db.query(
      `insert into known_addresses (chain_id, address, first_block, backfilled_to)
       select $1, decode(lpad(to_hex(i), 40, '0'), 'hex'), 1, 1 from generate_series(0, 450000) i`,
      [other],
    );
    const first = await knownAddresses.listPage(t.db, other, null, 3);
    expect(first.count).to.equal(3);
    expect((first.hex.match(/.{40}/g) ?? []).map((hex) => `0x${hex}`).sort()).to.deep.equal(addresses.slice(0, 3));
    expect(first.last).to.equal(addresses[2]);
    expect(await knownAddresses.listPage(t.db, other, addresses[449_999]!, 10)).to.deep.equal({
      hex: addresses[450_000]!.slice(2),
      count: 1,
      last: addresses[450_000],
    });
    const set = new KnownAddressSet(t.db, other);
    expect(await set.load()).to.include({ addresses: 450_001 });
    for (const a of addresses) if (!set.mayBeKnown(a)) expect.fail(`${a} lost`);
  });
});

describe('sync/KnownAddressSet, its filter stored', () => {
  const t = useTestDb();
  let chainId = 100;
  const hash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;

  /** A network whose cursor is at `block`, with `count` known addresses first seen in blocks 1–`block`. */
  async function network(block: number, count: number): Promise<{ chainId: number; addresses: string[] }> {
    chainId += 1;
    await indexerState.insertIfMissing(t.db, { chainId, network: `n${chainId}`, startBlock: 1 });
    await moveCursor(t.db, chainId, block);
    const addresses = await insertKnown(t.db, chainId, count, (i) => 1 + (i % block));
    return { chainId, addresses };
  }
  const moveCursor = (db: Db, chain: number, block: number) =>
    indexerState.updateCursor(db, {
      chainId: chain,
      indexedBlock: block,
      indexedBlockHash: hash(block),
      headBlock: block,
      backfillComplete: true,
    });
  async function insertKnown(db: Db, chain: number, count: number, firstBlock: (i: number) => number): Promise<string[]> {
    const addresses = Array.from({ length: count }, randomAddress);
    await knownAddresses.insertMany(
      db,
      chain,
      addresses.map((address, i) => ({ address, firstBlock: firstBlock(i), backfillTo: null })),
    );
    return addresses;
  }
  const cursorOf = async (chain: number) => (await indexerState.findCursor(t.db, chain))!;
  /** An address the stored filter does not hold (its bits say "certainly absent"). */
  async function absentFromStored(chain: number): Promise<string> {
    const stored = GrowingAddressFilter.fromStored((await knownAddressFilters.find(t.db, chain))!)!;
    for (;;) {
      const a = randomAddress();
      if (!stored.mayContain(a)) return a;
    }
  }

  it('is stored once enough addresses were added, then read back with only those first seen above its block', async () => {
    const { chainId: chain, addresses } = await network(10, 3_000);
    const first = new KnownAddressSet(t.db, chain, 1_000);
    expect(await first.load()).to.deep.include({ addresses: 3_000, stored: false, readAddresses: 3_000 });
    expect(first.saveDue).to.equal(true);
    expect(await first.saveWhenDue(await cursorOf(chain))).to.equal(true);
    expect(first.saveDue).to.equal(false);
    expect((await knownAddressFilters.find(t.db, chain))?.throughBlock).to.equal(10);

    // Blocks 11–12 make 500 more known (as the indexer writes them: added, then committed).
    const later = Array.from({ length: 500 }, randomAddress);
    first.add(later);
    await knownAddresses.insertMany(
      t.db,
      chain,
      later.map((address, i) => ({ address, firstBlock: 11 + (i % 2), backfillTo: 10 })),
    );
    first.committed(later);
    await moveCursor(t.db, chain, 12);

    const restarted = new KnownAddressSet(t.db, chain, 1_000);
    expect(await restarted.load()).to.deep.include({ addresses: 3_500, stored: true, readAddresses: 500 });
    for (const a of [...addresses, ...later]) if (!restarted.mayBeKnown(a)) expect.fail(`${a} lost`);
    const strangers = Array.from({ length: 2_000 }, randomAddress);
    expect([...(await restarted.knownAmong([...later.slice(0, 50), ...strangers]))].sort()).to.deep.equal(later.slice(0, 50).sort());
    // Not due: 500 read besides the stored filter, fewer than 1,000.
    expect(restarted.saveDue).to.equal(false);
  });

  it('after a reorg below its block, a restart reads what the re-indexed blocks made known', async () => {
    const { chainId: chain } = await network(20, 2_000);
    const set = new KnownAddressSet(t.db, chain, 1);
    await set.load();
    expect(await set.saveWhenDue(await cursorOf(chain))).to.equal(true);
    // The chain reorganises below block 20: the real rollback to block 12, then block 15 of the new
    // branch makes an address known that the stored bits do not hold.
    await rollbackTo(t.db, chain, { number: 12, hash: hash(12) });
    expect((await knownAddressFilters.find(t.db, chain))?.throughBlock).to.equal(12);
    const newcomer = await absentFromStored(chain);
    await knownAddresses.insertMany(t.db, chain, [{ address: newcomer, firstBlock: 15, backfillTo: 14 }]);
    await moveCursor(t.db, chain, 20);

    const restarted = new KnownAddressSet(t.db, chain, 1);
    const loaded = await restarted.load();
    expect(loaded).to.deep.include({ stored: true });
    // Blocks 13–20's addresses of the old branch were deleted; the newcomer is read from the table.
    expect(loaded.readAddresses).to.equal(await countAbove(t.db, chain, 12));
    expect(restarted.mayBeKnown(newcomer)).to.equal(true);
    expect([...(await restarted.knownAmong([newcomer]))]).to.deep.equal([newcomer]);
  });

  it('leaves the stored filter as it was when the cursor moved since the pass read it', async () => {
    const { chainId: chain } = await network(30, 1_000);
    const set = new KnownAddressSet(t.db, chain, 1);
    await set.load();
    const read = await cursorOf(chain);
    await moveCursor(t.db, chain, 31); // another writer's batch
    expect(await set.saveWhenDue(read)).to.equal(false);
    expect(await knownAddressFilters.find(t.db, chain)).to.equal(null);
    // And after a rollback at the same height (reorg_epoch moved):
    await rollbackTo(t.db, chain, { number: 30, hash: hash(30) });
    set.add([randomAddress()]);
    expect(await set.saveWhenDue({ indexedBlock: 30, reorgEpoch: read.reorgEpoch })).to.equal(false);
    expect(await set.saveWhenDue(await cursorOf(chain))).to.equal(false); // not due: nothing new since the last try
    set.add([randomAddress()]);
    expect(await set.saveWhenDue(await cursorOf(chain))).to.equal(true);
  });

  it('builds the filter from the table when the stored one has another layout', async () => {
    const { chainId: chain, addresses } = await network(5, 1_500);
    const set = new KnownAddressSet(t.db, chain, 1);
    await set.load();
    await set.saveWhenDue(await cursorOf(chain));
    await t.db.query(`update known_address_filters set layout = $2 where chain_id = $1`, [chain, FILTER_LAYOUT + 1]);
    const restarted = new KnownAddressSet(t.db, chain, 1);
    expect(await restarted.load()).to.deep.include({ addresses: 1_500, stored: false, readAddresses: 1_500 });
    for (const a of addresses) if (!restarted.mayBeKnown(a)) expect.fail(`${a} lost`);
  });

  it('reads the addresses above a block in pages, in (first block, address) order', async () => {
    const { chainId: chain } = await network(3, 0);
    const addresses = await insertKnown(t.db, chain, 7, (i) => 4 + (i % 3));
    const expected = addresses
      .map((address, i) => ({ address, firstBlock: 4 + (i % 3) }))
      .filter((a) => a.firstBlock > 4)
      .sort((a, b) => a.firstBlock - b.firstBlock || (a.address < b.address ? -1 : 1));
    const seen: string[] = [];
    for (let after: knownAddresses.FirstSeen | null = null; ;) {
      const page = await knownAddresses.listFirstSeenAbove(t.db, chain, { aboveBlock: 4, after, limit: 2 });
      if (page.count === 0) break;
      expect(page.count).to.be.at.most(2);
      seen.push(...(page.hex.match(/.{40}/g) ?? []).map((hex) => `0x${hex}`));
      expect(page.last?.address).to.equal(seen.at(-1));
      after = page.last;
    }
    expect(seen).to.deep.equal(expected.map((a) => a.address));
  });
});

async function countAbove(db: Db, chainId: number, block: number): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`select count(*) as n from known_addresses where chain_id = $1 and first_block > $2`, [
    chainId,
    block,
  ]);
  return Number(rows[0]!.n);
}

describe('sync/GrowingAddressFilter', () => {
  it('is stored and read back whole, answering as before; bits of another size are not read', () => {
    const filter = new GrowingAddressFilter(500, 0.01);
    const added = Array.from({ length: 3_000 }, randomAddress);
    for (const a of added) filter.add(a);
    const stored = filter.toStored();
    expect(stored.stageCounts).to.have.length.above(2);
    const back = GrowingAddressFilter.fromStored({ ...stored, bits: Buffer.from(stored.bits) })!;
    expect(back.count).to.equal(3_000);
    expect(back.bytes).to.equal(filter.bytes);
    for (const a of added) if (!back.mayContain(a)) expect.fail(`${a} lost`);
    const others = Array.from({ length: 5_000 }, randomAddress);
    expect(others.map((a) => back.mayContain(a))).to.deep.equal(others.map((a) => filter.mayContain(a)));
    // It goes on growing as the original would.
    const more = Array.from({ length: 3_000 }, randomAddress);
    for (const a of more) {
      back.add(a);
      filter.add(a);
    }
    expect(back.toStored().bits.equals(filter.toStored().bits)).to.equal(true);
    expect(GrowingAddressFilter.fromStored({ ...stored, bits: stored.bits.subarray(4) })).to.equal(null);
    expect(GrowingAddressFilter.fromStored({ ...stored, layout: FILTER_LAYOUT + 1 })).to.equal(null);
  });

  it('grows by stages past its first capacity, losing nothing and keeping about its false-positive rate', () => {
    const filter = new GrowingAddressFilter(1_000, 0.01);
    const added = Array.from({ length: 20_000 }, randomAddress);
    for (const a of added) filter.add(a);
    expect(filter.count).to.equal(20_000);
    for (const a of added) if (!filter.mayContain(a)) expect.fail(`${a} lost`);
    const others = Array.from({ length: 20_000 }, randomAddress);
    expect(others.filter((a) => filter.mayContain(a)).length / others.length).to.be.below(0.03);
  });
});
