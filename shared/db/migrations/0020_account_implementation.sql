-- The implementation an account runs, named by the indexer from what the chain shows (its code, the
-- implementation or delegate its proxy points to, its module; shared/accountImplementations.ts):
-- "Kernel v3.1", "Safe 1.4.1 + Safe4337Module 0.3.0", … or 'unknown' when nothing there is known.
-- null: not looked at yet (the indexer names new accounts off the hot path, when it reaches the head).
-- A reorg deletes and rebuilds the accounts it touches, so they are named again.
alter table accounts add column implementation text;
-- The accounts waiting to be named, oldest first: few at any time, so a small partial index.
create index accounts_unnamed on accounts (chain_id, first_op_block) where implementation is null;
