-- INDEXER_TRANSFERS=known: the indexer's Bloom filter of a network's known addresses
-- (indexer/sync/knownAddressSet.ts), stored so that a start reads one value instead of every
-- address (10 million addresses: 27 MB instead of 200 MB read and hashed again). Every address of
-- known_addresses with first_block <= through_block is in the bits; those seen above it are read
-- from the table at start. A reorg below through_block lowers it in the transaction that deletes
-- the addresses above the ancestor (knownAddresses.deleteAbove), so an address seen again in the
-- re-indexed blocks is always read. layout: how the bits are laid out and hashed
-- (addressBloomFilter.ts FILTER_LAYOUT); a filter of another layout is built again from the table.
create table known_address_filters (
  chain_id bigint primary key,
  layout integer not null,
  through_block bigint not null,
  first_capacity bigint not null,
  false_positive_rate double precision not null,
  stage_counts bigint[] not null,
  bits bytea not null,
  saved_at timestamptz not null default now()
);
-- Bloom filter bits do not compress: stored out of line as they are, never tried.
alter table known_address_filters alter column bits set storage external;

-- The addresses seen above a stored filter's through_block, read at start.
create index known_addresses_first_seen on known_addresses (chain_id, first_block);
