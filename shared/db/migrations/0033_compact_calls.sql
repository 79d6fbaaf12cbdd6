-- Issue 34: an op's decoded account calls (0024) without a second copy of their bytes. Each call's
-- data is, for every decoder (execute, executeBatch, Safe multiSend, ERC-7579 execution calldata…),
-- a contiguous slice of the op's own callData, which is in its row or, since 0028, in its bundle
-- transaction's input. The three arrays of 0024 (about 240 of an op row's 655 bytes on the
-- realistic devnet, an array header of ~21 bytes and a 4-byte header per element each) become:
--   calls_target   bytea: the calls' 20-byte targets, concatenated in call order; null: no calls
--                  (so the call count is length(calls_target) / 20).
--   calls_value    numeric[]: as before, but null when every call's value is zero (most ops).
--   calls_data_at  bytea: per call 8 bytes, the byte offset and length (uint32 big-endian each) of
--                  its data in the op's callData; set only when reading every call's data back from
--                  there gives exactly the stored bytes (the indexer checks the same when it writes:
--                  shared/db/tables/userOpCalls.ts), and calls_data is then null.
--   calls_data     bytea[]: as before, for the ops whose calls are not all slices of their callData.
-- Reads fill the calls back (userOpCalls.ts callsOfRow); SQL that needs them uses opscan_op_calls.
--
-- Run with the indexer stopped: user_ops is rewritten once (one transaction, as 0028).

-- The uint32 (big-endian) at byte `p` of `b`.
create function opscan_uint32_at(b bytea, p integer) returns integer language sql immutable strict parallel safe as $$
  select (get_byte(b, p) << 24) | (get_byte(b, p + 1) << 16) | (get_byte(b, p + 2) << 8) | get_byte(b, p + 3)
$$;

-- An op's calls, in order (call_index from 1), from its stored columns and its callData (its
-- call_data column, or opscan_op_bytes(input, op_at, 3) when it keeps it in the input).
create function opscan_op_calls(op_call_data bytea, calls_target bytea, calls_value numeric[], calls_data bytea[], calls_data_at bytea)
returns table (call_index integer, target bytea, value numeric, data bytea) language sql immutable parallel safe as $$
  select i, substring(calls_target from 20 * (i - 1) + 1 for 20), coalesce(calls_value[i], 0),
         coalesce(calls_data[i], substring(op_call_data from opscan_uint32_at(calls_data_at, 8 * (i - 1)) + 1
                                                        for opscan_uint32_at(calls_data_at, 8 * (i - 1) + 4)))
  from generate_series(1, length(calls_target) / 20) i
$$;

-- Where each of `datas` first occurs in `call_data`, as calls_data_at; null unless every one does
-- (position() is byte-exact: reading a slice back gives the data itself; an empty data is at 0).
create function opscan_calls_data_at(call_data bytea, datas bytea[]) returns bytea language sql immutable strict parallel safe as $$
  select case when bool_and(position(d in call_data) > 0) then
    string_agg(int4send(position(d in call_data) - 1) || int4send(length(d)), ''::bytea order by i) end
  from unnest(datas) with ordinality as c(d, i)
$$;

-- Every target is an address (the count is read from their concatenation's length).
do $$
begin
  if exists (select 1 from user_ops, unnest(calls_target) t where t is null or length(t) <> 20) then
    raise exception 'user_ops.calls_target holds a value that is not a 20-byte address: not migrated';
  end if;
end $$;

-- Each op's calls_data_at, from its callData wherever it is kept (0028).
create temporary table op_call_slices on commit drop as
select u.chain_id, u.user_op_hash,
       opscan_calls_data_at(coalesce(u.call_data, case when u.op_at is not null then
                              (select opscan_op_bytes(bt.input, u.op_at, 3) from bundle_transactions bt
                               where bt.chain_id = u.chain_id and bt.tx_hash = u.tx_hash) end),
                            u.calls_data) as data_at
from user_ops u
where cardinality(u.calls_data) > 0;
delete from op_call_slices where data_at is null;
alter table op_call_slices add primary key (chain_id, user_op_hash);

-- lz4 where the build has it (builds without lz4, PGlite, keep pglz), as 0011 and 0022–0028 set it
-- inline, kept as functions for the migrations after this one: as the compression of this
-- transaction's rewrites, and again for the columns of a partitioned table that ALTER … TYPE reset.
create function opscan_rewrite_with_lz4() returns void language plpgsql as $$
begin
  perform set_config('default_toast_compression', 'lz4', true);
exception when others then
  null;
end $$;
create function opscan_columns_lz4(parent text, columns text[]) returns void language plpgsql as $$
declare
  col record;
begin
  for col in
    select a.attrelid::regclass as tab, a.attname as name
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    where (c.relname = parent or c.oid in (select inhrelid from pg_inherits where inhparent::regclass::text = parent))
      and a.attname = any (columns) and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')
  loop
    execute format('alter table %s alter column %I set compression lz4', col.tab, col.name);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;

select opscan_rewrite_with_lz4();

-- user_ops rewritten once (an UPDATE would leave every row's old version in the table, as 0023
-- explains); the choices are made in functions: a CASE or a subquery in the USING of a
-- partitioned table fails (on PGlite; subqueries everywhere).
create function opscan_0033_data_at(chain bigint, hash bytea) returns bytea language sql stable as $$
  select data_at from op_call_slices where chain_id = chain and user_op_hash = hash
$$;
create function opscan_0033_datas(chain bigint, hash bytea, datas bytea[]) returns bytea[] language sql stable as $$
  select case when cardinality(datas) = 0 or exists (select 1 from op_call_slices where chain_id = chain and user_op_hash = hash)
    then null else datas end
$$;
create function opscan_0033_targets(targets bytea[]) returns bytea language sql immutable as $$
  select string_agg(t, ''::bytea order by i) from unnest(targets) with ordinality as c(t, i)
$$;
create function opscan_0033_values(vals numeric[]) returns numeric[] language sql immutable as $$
  select case when vals <> '{}' and 0 <> any (vals) then vals end
$$;

alter table user_ops
  alter column calls_target drop default, alter column calls_target drop not null,
  alter column calls_value drop default, alter column calls_value drop not null,
  alter column calls_data drop default, alter column calls_data drop not null,
  add column calls_data_at bytea;
alter table user_ops
  alter column calls_data_at type bytea using opscan_0033_data_at(chain_id, user_op_hash),
  alter column calls_data type bytea[] using opscan_0033_datas(chain_id, user_op_hash, calls_data),
  alter column calls_target type bytea using opscan_0033_targets(calls_target),
  alter column calls_value type numeric(78, 0)[] using opscan_0033_values(calls_value);
drop function opscan_0033_values(numeric[]);
drop function opscan_0033_targets(bytea[]);
drop function opscan_0033_datas(bigint, bytea, bytea[]);
drop function opscan_0033_data_at(bigint, bytea);

select opscan_columns_lz4('user_ops', array['calls_target', 'calls_value', 'calls_data', 'calls_data_at']);
