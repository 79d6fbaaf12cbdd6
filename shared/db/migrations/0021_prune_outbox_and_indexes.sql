-- Issue 34: each index earning its place (bytes per op measured by `npm run bench -- storage`; the
-- query behind each kept index in notes/storemeasure.md). Outbox rows themselves are pruned by the
-- dispatcher (OUTBOX_RETENTION_HOURS), not here.

-- No query reads user_op_calls by target since the target is kept on the op (0017: user_ops_target).
drop index if exists user_op_calls_target;

-- No query reads bundle_transactions by sender: a bundler's bundles are read from bundles
-- (bundles_bundler), its ops from user_ops (user_ops_bundler), an address's transactions from
-- address_transactions.
drop index if exists bundle_transactions_from;

-- An op's transfers are read by its hash (chain_id, user_op_hash = $2): the transfers of plain
-- transactions (INDEXER_TRANSFERS=known), a fifth to a quarter of the rows, have none and never match.
drop index if exists token_transfers_user_op;
create index token_transfers_user_op on token_transfers (chain_id, user_op_hash) where user_op_hash is not null;

-- The only reader of logs and bundle_transactions by block is a reorg's rollback (`block_number >
-- ancestor`, the newest rows). Rows are written in block order, so a BRIN index (one summary per
-- 128 heap pages) finds them as well as the B-tree did, at a ten-thousandth of its size.
drop index if exists logs_block;
create index logs_block on logs using brin (block_number);
drop index if exists bundle_transactions_block;
create index bundle_transactions_block on bundle_transactions using brin (block_number);

-- An address's transactions are read newest first (chain_id, address, block_number desc, tx_index
-- desc); the key (chain_id, address, tx_hash) only kept a row from being stored twice. Within a
-- chain a transaction is one (block_number, tx_index), so the reading order is as unique a key: one
-- index instead of two (a backward scan reads it newest first).
alter table address_transactions drop constraint address_transactions_pkey;
drop index if exists address_transactions_recent;
alter table address_transactions add constraint address_transactions_pkey primary key (chain_id, address, block_number, tx_index);
