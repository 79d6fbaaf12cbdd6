-- user_ops loses user_ops_tx (tx_hash, log_index): 80 bytes per op on the realistic devnet. The ops
-- of one transaction are all in its block, and every read of ops by transaction hash knows that
-- block from bundle_transactions (primary key (chain_id, tx_hash)), which it reads or joins
-- already: it finds the ops as the block's range of user_ops_latest (block_number, log_index),
-- the transaction hash a filter on that range (shared/db/tables/userOps.ts, logs.ts, bundles.ts;
-- the GraphQL `transactionHash` filter and Bundle.userOps).
--
-- user_ops_bundler stays: the GraphQL `bundler` filter composes with any other filter, order and
-- `or`, which a path through bundles_bundler would not serve in the same order (notes/optx-index.md).

-- The indexer writes an op and its transaction from one receipt, and a reorg deletes them together
-- (user_ops.block_number is the receipt's, as bundle_transactions.block_number): an op without its
-- transaction in its block would drop out of every read by transaction. Refuse rather than lose it.
do $$
declare
  bad record;
begin
  select o.chain_id, o.user_op_hash into bad from user_ops o
  where not exists (select 1 from bundle_transactions bt
                    where bt.chain_id = o.chain_id and bt.tx_hash = o.tx_hash and bt.block_number = o.block_number)
  limit 1;
  if found then
    raise exception 'op % (chain %) has no bundle_transactions row for its transaction in its block',
      '0x' || encode(bad.user_op_hash, 'hex'), bad.chain_id;
  end if;
end $$;

drop index user_ops_tx;
