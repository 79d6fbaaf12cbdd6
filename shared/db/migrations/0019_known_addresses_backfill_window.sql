-- The transfer backfill reads a window of each known address's earlier token logs instead of the
-- whole indexed history (INDEXER_TRANSFER_LOOKBACK_BLOCKS before first_block). backfill_to: the
-- last block of that window. The forward pass reads an address's logs from the range where it is
-- first seen, so an address it records gets first_block - 1; null means "up to the cursor when
-- read" (addresses recorded under INDEXER_TRANSFERS=ops, or before this column existed: the
-- forward pass did not read their later logs).
alter table known_addresses add column backfill_to bigint;
