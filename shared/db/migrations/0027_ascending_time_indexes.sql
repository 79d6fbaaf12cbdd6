-- The indexes that grow at the newest end of their key range are rebuilt ascending. A descending
-- index puts each new entry at the left end of its range, and a B-tree splits such a page in half
-- and leaves the left half half-empty for good; ascending, new entries land at the right end,
-- where PostgreSQL splits a full page 90/10 (the rightmost page) or right after the new entry
-- (a run of increasing keys). Measured on 20,000 realistic ops inserted block by block:
-- (chain_id, block_number, log_index) 73 → 41 bytes per op, the bundler index 122 → 109, the
-- paymaster index 61 → 52. Reads are unchanged: `order by block_number desc, log_index desc` is
-- the same index read backward.

drop index user_ops_latest;
create index user_ops_latest on user_ops (chain_id, block_number, log_index);

drop index user_ops_bundler;
create index user_ops_bundler on user_ops (chain_id, bundler, block_number, log_index);

drop index user_ops_paymaster;
create index user_ops_paymaster on user_ops (chain_id, paymaster, block_number, log_index) where paymaster is not null;

drop index bundles_block;
create index bundles_block on bundles (chain_id, block_number, tx_hash, bundle_index);
