-- Issue 34: a bundle transaction's logs kept once, with the transaction, packed into one bytea.
-- Each `logs` row paid a tuple header, the chain id, the transaction and op hashes, a bytea[] header
-- and two index entries for ~170 bytes of its own; packed, a transaction's logs are their own
-- bytes and little else. The format (shared/db/tables/logs.ts packLogs / unpackLogs), per log in
-- receipt order: address (20 bytes), topic count (1 byte), the topics (32 bytes each), data length
-- (4 bytes, big-endian), data. A transaction's logs are contiguous in its block: log i has the
-- block-level index first_log_index + i and the transaction-level index i.
--
-- A log's op (logs.user_op_hash) is not kept: it follows from the ops of the transaction (user_ops:
-- log_index, exec_log_from, exec_log_to) by the rule the indexer always tagged it with (logOwners).
--
-- address_transactions drops tx_hash: a transaction is also its (block_number, tx_index) within a
-- chain, which its rows carry already; its read joins bundle_transactions on those.
--
-- Run with the indexer stopped: bundle_transactions and address_transactions are rewritten (one
-- transaction, as 0021 and 0022).

-- The rewrite compresses with lz4 (builds without lz4, PGlite, keep pglz); see 0022.
do $$
begin
  perform set_config('default_toast_compression', 'lz4', true);
exception when others then
  null;
end $$;

-- Every transaction's logs packed, in one pass over `logs`, with what the format relies on.
create temporary table packed_transaction_logs on commit drop as
select chain_id, tx_hash,
       min(log_index - tx_log_index) as first_log_index,
       max(log_index - tx_log_index) as last_first_log_index,
       count(*) as log_count,
       max(tx_log_index) as last_tx_log_index,
       -- Topics of 32 bytes, at most 4 (LOG0 … LOG4), none null: then they are 32 × count bytes.
       bool_and(length(address) = 20 and length(topic_bytes) = 32 * topic_count) as well_formed,
       string_agg(address || substr(int4send(topic_count), 4) || topic_bytes || int4send(length(data)) || data,
                  ''::bytea order by log_index) as logs
from (select chain_id, tx_hash, log_index, tx_log_index, address, data, cardinality(topics) as topic_count,
             coalesce(topics[1], '') || coalesce(topics[2], '') || coalesce(topics[3], '') || coalesce(topics[4], '') as topic_bytes
      from logs) l
group by chain_id, tx_hash;
alter table packed_transaction_logs add primary key (chain_id, tx_hash);

do $$
declare
  bad record;
begin
  select * into bad from packed_transaction_logs
  where first_log_index <> last_first_log_index or last_tx_log_index <> log_count - 1 or not well_formed
  limit 1;
  if found then
    raise exception 'logs of transaction % (chain %) cannot be packed: not contiguous from tx_log_index 0, or an address or topic of another length',
      '0x' || encode(bad.tx_hash, 'hex'), bad.chain_id;
  end if;
  -- Logs are written with their transaction (indexer/decode/decodeTransaction.ts) and rolled back
  -- with it: none should lack it. Refuse to drop any that would.
  select p.chain_id, p.tx_hash into bad from packed_transaction_logs p
  where not exists (select 1 from bundle_transactions bt where bt.chain_id = p.chain_id and bt.tx_hash = p.tx_hash)
  limit 1;
  if found then
    raise exception 'logs of transaction % (chain %) have no bundle_transactions row', '0x' || encode(bad.tx_hash, 'hex'), bad.chain_id;
  end if;
end $$;

-- Tuples over the TOAST threshold (~2 KB, fixed at compile time: smaller ones are never compressed,
-- whatever the target) are compressed, and moved out of line, down to this target instead of
-- 2 KB. Measured on the storage bench's realistic devnet (606 transactions, input and logs
-- rewritten per target): 1,024 bytes took 6 % less than the default and 8 % less than 128, which
-- moves every compressed value out of line (a TOAST chunk row and index entry each).
alter table bundle_transactions set (toast_tuple_target = 1024);
alter table bundle_transactions
  add column first_log_index integer not null default 0,
  add column logs bytea not null default '\x';

-- bundle_transactions rewritten once, each row given its logs on the way by these look-ups. (An
-- UPDATE would leave every row's old version in the table: in the transaction that wrote them, not
-- even CLUSTER may drop them.)
create function opscan_0023_first_log_index(chain bigint, tx bytea) returns integer language sql stable as $$
  select first_log_index from packed_transaction_logs where chain_id = chain and tx_hash = tx
$$;
create function opscan_0023_packed_logs(chain bigint, tx bytea) returns bytea language sql stable as $$
  select logs from packed_transaction_logs where chain_id = chain and tx_hash = tx
$$;
alter table bundle_transactions
  alter column first_log_index type integer using coalesce(opscan_0023_first_log_index(chain_id, tx_hash), 0),
  alter column logs type bytea using coalesce(opscan_0023_packed_logs(chain_id, tx_hash), '\x');
drop function opscan_0023_first_log_index(bigint, bytea);
drop function opscan_0023_packed_logs(bigint, bytea);
do $$
begin
  alter table bundle_transactions alter column logs set compression lz4;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;

drop table logs;

create or replace function opscan_partitioned_tables() returns text[] language sql immutable as $$
  select array['user_ops', 'user_op_calls', 'token_transfers', 'address_transactions', 'user_op_traces', 'outbox_events']
$$;

-- A transaction by its place in the chain: address_transactions' read, and a reorg's rollback
-- (`block_number > ancestor`), which the BRIN index served before.
create unique index bundle_transactions_position on bundle_transactions (chain_id, block_number, tx_index);
drop index if exists bundle_transactions_block;

-- Every address_transactions row must name the transaction at its position, or its answer would change.
do $$
declare
  bad record;
begin
  select a.chain_id, a.tx_hash into bad from address_transactions a
  left join bundle_transactions bt on bt.chain_id = a.chain_id and bt.block_number = a.block_number and bt.tx_index = a.tx_index
  where bt.tx_hash is distinct from a.tx_hash
  limit 1;
  if found then
    raise exception 'address_transactions names transaction % (chain %), which is not the bundle transaction at its block and index',
      '0x' || encode(bad.tx_hash, 'hex'), bad.chain_id;
  end if;
end $$;
alter table address_transactions drop column tx_hash;

-- A dropped column keeps its bytes in the rows written before: rewrite each address_transactions
-- partition (CLUSTER by its key; a partitioned table cannot be clustered in a transaction).
do $$
declare
  part record;
begin
  for part in
    select i.inhrelid::regclass as tab, x.indexrelid::regclass as pkey
    from pg_inherits i join pg_index x on x.indrelid = i.inhrelid and x.indisprimary
    where i.inhparent = 'address_transactions'::regclass
  loop
    execute format('cluster %s using %s', part.tab, part.pkey);
    execute format('alter table %s set without cluster', part.tab);
  end loop;
end $$;
