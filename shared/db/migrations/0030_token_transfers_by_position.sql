-- token_transfers is keyed by a transfer's place in its chain, (chain_id, block_number, log_index,
-- batch_index), instead of (chain_id, tx_hash, log_index, batch_index), and loses its index on the op.
--
-- The key: log_index is the block-level index of the transfer's log, so a block and that index name
-- the log (its transaction with them); batch_index tells the ids of one ERC-1155 TransferBatch apart.
-- A NATIVE row has log_index = -1 - (its op's UserOperationEvent log index, 0005), also one per op in
-- a block, and batch_index = its call's index in the op. The old key began with a 33-byte random hash:
-- each new entry landed anywhere in the index, whose pages stayed about half full; the new one grows
-- at its right end as blocks are indexed, so its pages fill, and its key is 24 bytes instead of 41.
-- `on conflict do nothing` writes (the indexer's repair and known-address backfill) keep a row stored
-- once; a rollback's `block_number > $2` reads the key too.
--
-- token_transfers_user_op (user_op_hash, 33 bytes an entry, 2.3 entries an op) goes: an op's
-- transfers are read by its block number through the key, the block's rows then filtered by the op's
-- hash (tokenTransfers.listByUserOp, the GraphQL UserOp.erc20Transfers and erc721Transfers).
-- Measured on the 1,014-op realistic database (after VACUUM FULL): notes/transfers-key.md.

alter table token_transfers drop constraint token_transfers_pkey;

-- Two rows at one place would be a database not written by the indexer (log indexes numbered per
-- transaction, not per block): refused, the migration rolled back, rather than one of them dropped.
do $$
begin
  alter table token_transfers add constraint token_transfers_pkey primary key (chain_id, block_number, log_index, batch_index);
exception when unique_violation then
  raise exception 'token_transfers holds two transfers at one (chain_id, block_number, log_index, batch_index): %', sqlerrm
    using hint = 'log_index must be the block-level index of the transfer''s log (NATIVE: -1 minus the op''s UserOperationEvent index)';
end $$;

drop index token_transfers_user_op;
