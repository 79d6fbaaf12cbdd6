-- INDEXER_TRANSFERS=known: the indexer's Bloom filter of a network's known addresses
-- (indexer/sync/knownAddressSet.ts), stored so that a start reads it instead of every address
-- (10 million addresses: 27 MB of bits instead of 200 MB of addresses read and hashed again).
-- Every address of known_addresses with first_block <= through_block is in the bits; those first
-- seen above it are read from the table at start. A reorg below through_block lowers it in the
-- transaction that deletes the addresses above the ancestor (knownAddresses.deleteAbove), so an
-- address seen again in the re-indexed blocks is always read. layout: how the bits are laid out
-- and hashed (addressBloomFilter.ts FILTER_LAYOUT); a filter of another layout is built again
-- from the table.
create table known_address_filters (
  chain_id bigint primary key,
  layout integer not null,
  through_block bigint not null,
  first_capacity bigint not null,
  false_positive_rate double precision not null,
  stage_counts bigint[] not null,
  saved_at timestamptz not null default now()
);
-- The bits, in parts of 1 MB (part 0 first): one value of 27 MB costs the client and the server
-- about three times as much to write and to read as the same bytes in parts.
create table known_address_filter_parts (
  chain_id bigint not null references known_address_filters on delete cascade,
  part integer not null,
  bits bytea not null,
  primary key (chain_id, part)
);
-- Bloom filter bits do not compress: stored out of line as they are, never tried.
alter table known_address_filter_parts alter column bits set storage external;

-- The addresses first seen above a stored filter's through_block, read at start.
create index known_addresses_first_seen on known_addresses (chain_id, first_block);
