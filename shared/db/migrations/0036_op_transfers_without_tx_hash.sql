-- Issue 34: an op's token transfer without its transaction hash. A transfer made while an op executed
-- (user_op_hash not null) repeated its op's transaction hash (33 bytes of a ~204-byte row, 2 rows an
-- op); the op's row (user_ops, key (chain_id, user_op_hash)) holds it. tx_hash is now null for those
-- rows and kept for a plain transaction's transfer (user_op_hash null, INDEXER_TRANSFERS=known), which
-- has no op. Reads take coalesce(tx_hash, the op's tx_hash by user_ops' key) (tokenTransfers.ts
-- txHashOf); the indexer writes null for an op's transfer.
--
-- Run with the indexer stopped: token_transfers is rewritten once (one transaction, as 0028 and 0033).

-- Each op transfer's hash must be its op's, or the answers would change: refused, not migrated.
do $$
declare
  bad record;
begin
  select t.block_number, t.log_index, encode(t.user_op_hash, 'hex') as op into bad
  from token_transfers t
  where t.user_op_hash is not null
    and not exists (select 1 from user_ops o
                    where o.chain_id = t.chain_id and o.user_op_hash = t.user_op_hash and o.tx_hash = t.tx_hash)
  limit 1;
  if found then
    raise exception 'token_transfers holds an op''s transfer whose tx_hash is not its op''s (block %, log %, op 0x%): not migrated',
      bad.block_number, bad.log_index, bad.op
      using hint = 'every token_transfers row with a user_op_hash needs its op in user_ops, in the same transaction';
  end if;
end $$;

-- token_transfers rewritten once, each op transfer's tx_hash dropped on the way (an UPDATE would
-- leave every row's old version in the table, as 0023 explains; most rows are ops'); the rewrite
-- also rebuilds the indexes. The choice is made in a function: a CASE in the USING of a partitioned
-- table fails on PGlite (0028).
-- (lz4 as the other rewritten columns: ALTER … TYPE resets a column's compression; 0033's functions.)
select opscan_rewrite_with_lz4();
create function opscan_0036_plain_tx_hash(op bytea, tx bytea) returns bytea language sql immutable as $$
  select case when op is null then tx end
$$;
alter table token_transfers alter column tx_hash drop not null;
alter table token_transfers alter column tx_hash type bytea using opscan_0036_plain_tx_hash(user_op_hash, tx_hash);
drop function opscan_0036_plain_tx_hash(bytea, bytea);
select opscan_columns_lz4('token_transfers', array['tx_hash']);

-- Exactly one of the two says where the transfer was made: its op, or its plain transaction.
alter table token_transfers add constraint token_transfers_op_or_tx check ((user_op_hash is null) = (tx_hash is not null));
