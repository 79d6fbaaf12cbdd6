/**
 * Known addresses without the heap (INDEXER_TRANSFERS=known): the Bloom filter never says "absent"
 * for an address it holds and lets through about 1 % of the others; the set built from the table
 * answers exactly (the table settles what the filter lets through), counts what decoded ranges made
 * known before their batch commits; the growing filter keeps its rate past its first capacity.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import * as knownAddresses from '../../../shared/db/tables/knownAddresses.js';
import { AddressBloomFilter, GrowingAddressFilter } from '../../../indexer/sync/addressBloomFilter.js';
import { KnownAddressSet } from '../../../indexer/sync/knownAddressSet.js';
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

describe('sync/GrowingAddressFilter', () => {
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
