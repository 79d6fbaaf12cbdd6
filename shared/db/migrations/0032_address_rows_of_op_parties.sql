-- address_transactions drops the rows user_ops answers already (issue 34): an address's
-- transaction as one of its ops' sender (user_ops_sender) or as their bundler, the transaction's
-- sender (user_ops_bundler); an op row holds its block_number and tx_index. listByAddress reads those
-- two indexes beside address_transactions and answers their union, newest first, as before; the
-- indexer writes only the other parties (call targets, transfer parties). 1,533 of the 4,127 rows
-- of a realistic chain of 1,014 ops.
--
-- A row goes only where an op of the same transaction (block_number, tx_index) has its address as
-- sender or bundler. A transaction without ops keeps its sender's row.

-- The rows kept are written again, sorted, and the key built after them (as 0021 did): the table
-- and its index come out packed, without the space the dropped rows held.
create temp table address_transactions_kept on commit drop as
select a.chain_id, a.address, a.block_number, a.tx_index from address_transactions a
where not exists (select 1 from user_ops u
                  where u.chain_id = a.chain_id and u.sender = a.address and u.block_number = a.block_number and u.tx_index = a.tx_index)
  and not exists (select 1 from user_ops u
                  where u.chain_id = a.chain_id and u.bundler = a.address and u.block_number = a.block_number and u.tx_index = a.tx_index);

truncate address_transactions;
alter table address_transactions drop constraint address_transactions_pkey;
insert into address_transactions (chain_id, address, block_number, tx_index)
select chain_id, address, block_number, tx_index from address_transactions_kept order by chain_id, address, block_number, tx_index;
alter table address_transactions add constraint address_transactions_pkey primary key (chain_id, address, block_number, tx_index);
