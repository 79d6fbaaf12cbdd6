-- Issue 34: an op's own bytes kept once, in its bundle transaction's input. An op decoded from the
-- transaction's own handleOps call has its struct there, and bundle_transactions.input (stored
-- once per transaction, compressed) is read by every op answer anyway. Such an op is stored with
-- `op_at`, the byte offset of its struct in the input (selector included), and its init_code,
-- call_data, paymaster_and_data, signature, account_gas_limits and gas_fees NULL: only when
-- reading them back from the input gives exactly the stored values (the indexer checks the same
-- when it writes: shared/db/tables/userOps.ts storedForm). Every other op keeps its columns.
-- Reads fill the fields back with the one struct layout (shared/calldata/userOpLayout.ts); SQL
-- that needs them (the GraphQL view) uses the two functions below, whose head slots are that
-- layout's: v0.6 initCode 2, callData 3, paymasterAndData 9, signature 10; v0.7+ initCode 2,
-- callData 3, accountGasLimits 4, gasFees 6, paymasterAndData 7, signature 8.
--
-- Run with the indexer stopped: user_ops is rewritten once (one transaction, as 0025).

-- The ABI word at byte `p` of `input` as a length or offset: null unless it is in the input and
-- below 2^31 (the only ones a real input has; anything else reads as no value).
create function opscan_abi_index(input bytea, p integer) returns integer language sql immutable strict parallel safe as $$
  select case when p >= 0 and length(input) >= p + 32 and btrim(substring(input from p + 1 for 28), '\x00'::bytea) = ''::bytea
              and get_byte(input, p + 28) < 128 then
    (get_byte(input, p + 28) << 24) | (get_byte(input, p + 29) << 16) | (get_byte(input, p + 30) << 8) | get_byte(input, p + 31)
  end
$$;

-- The dynamic `bytes` field of the struct at `op_at` whose offset word (relative to the struct)
-- is head slot `slot`; null when it does not fit in the input.
create function opscan_op_bytes(input bytea, op_at integer, slot integer) returns bytea language sql immutable strict parallel safe as $$
  select case when at + 32 + len <= length(input) then substring(input from (at + 33)::integer for len) end
  from (select op_at::bigint + opscan_abi_index(input, op_at + 32 * slot) as at) f
  cross join lateral (select case when f.at + 32 <= length(input) then opscan_abi_index(input, f.at::integer) end as len) l
$$;

-- The static bytes32 field of the struct at `op_at` in head slot `slot` (v0.7+ accountGasLimits, gasFees).
create function opscan_op_word(input bytea, op_at integer, slot integer) returns bytea language sql immutable strict parallel safe as $$
  select case when length(input) >= op_at + 32 * slot + 32 then substring(input from op_at + 32 * slot + 1 for 32) end
$$;

-- The offset of each op's struct in a direct handleOps(ops, beneficiary) call of its own
-- EntryPoint version: arguments at byte 4, the ops array's offset in their first word; at the
-- array, its length, then the items' offsets relative to the items' start. (handleAggregatedOps
-- ops, embedded and traced bundles keep their columns.) Kept only where every field reads back equal.
create temporary table op_structs_in_input on commit drop as
select chain_id, user_op_hash, op_at::integer as op_at
from (
  select u.chain_id, u.user_op_hash, u.entry_point_version, u.init_code, u.call_data, u.paymaster_and_data, u.signature,
         u.account_gas_limits, u.gas_fees, bt.input,
         i.items + opscan_abi_index(bt.input, (i.items + 32 * u.op_index)::integer) as op_at
  from user_ops u
  join bundle_transactions bt on bt.chain_id = u.chain_id and bt.tx_hash = u.tx_hash
  cross join lateral (select 4 + opscan_abi_index(bt.input, 4) as ops_array) a
  cross join lateral (select a.ops_array::bigint + 32 as items) i
  where u.op_index is not null and u.op_index < opscan_abi_index(bt.input, a.ops_array)
    and i.items + 32 * u.op_index + 32 <= length(bt.input)
    and bt.tx_to = u.entry_point
    and substring(bt.input from 1 for 4) = case when u.entry_point_version = 'v0.6' then '\x1fad948c'::bytea else '\x765e827f'::bytea end
) c
where op_at + 32 * 11 <= length(input)
  and opscan_op_bytes(input, op_at::integer, 2) = init_code
  and opscan_op_bytes(input, op_at::integer, 3) = call_data
  and case when entry_point_version = 'v0.6' then
        opscan_op_bytes(input, op_at::integer, 9) = paymaster_and_data and opscan_op_bytes(input, op_at::integer, 10) = signature
        and account_gas_limits is null and gas_fees is null
      else
        opscan_op_bytes(input, op_at::integer, 7) = paymaster_and_data and opscan_op_bytes(input, op_at::integer, 8) = signature
        and opscan_op_word(input, op_at::integer, 4) = account_gas_limits and opscan_op_word(input, op_at::integer, 6) = gas_fees
      end;
alter table op_structs_in_input add primary key (chain_id, user_op_hash);

alter table user_ops add column op_at integer;

-- The rewrite compresses with lz4 (this transaction's default; builds without lz4, PGlite, keep
-- pglz); ALTER … TYPE resets the columns' compression, which gets lz4 again at the end (as in 0025).
do $$
begin
  perform set_config('default_toast_compression', 'lz4', true);
exception when others then
  null;
end $$;

-- user_ops rewritten once, each verified op given op_at and its columns dropped on the way (an
-- UPDATE would leave every row's old version in the table, as 0023 explains).
create function opscan_0028_op_at(chain bigint, hash bytea) returns integer language sql stable as $$
  select op_at from op_structs_in_input where chain_id = chain and user_op_hash = hash
$$;
-- (The choice is made in a function: a CASE in the USING of a partitioned table fails on PGlite.)
create function opscan_0028_unless_in_input(chain bigint, hash bytea, value bytea) returns bytea language sql stable as $$
  select case when exists (select 1 from op_structs_in_input where chain_id = chain and user_op_hash = hash) then null else value end
$$;
alter table user_ops
  alter column op_at type integer using opscan_0028_op_at(chain_id, user_op_hash),
  alter column init_code type bytea using opscan_0028_unless_in_input(chain_id, user_op_hash, init_code),
  alter column call_data type bytea using opscan_0028_unless_in_input(chain_id, user_op_hash, call_data),
  alter column paymaster_and_data type bytea using opscan_0028_unless_in_input(chain_id, user_op_hash, paymaster_and_data),
  alter column signature type bytea using opscan_0028_unless_in_input(chain_id, user_op_hash, signature),
  alter column account_gas_limits type bytea using opscan_0028_unless_in_input(chain_id, user_op_hash, account_gas_limits),
  alter column gas_fees type bytea using opscan_0028_unless_in_input(chain_id, user_op_hash, gas_fees);
drop function opscan_0028_unless_in_input(bigint, bytea, bytea);
drop function opscan_0028_op_at(bigint, bytea);

-- lz4 again for the rewritten columns of user_ops and its partitions (as 0025).
do $$
declare
  col record;
begin
  for col in
    select a.attrelid::regclass as tab, a.attname as name
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    where (c.relname = 'user_ops' or c.oid in (select inhrelid from pg_inherits where inhparent::regclass::text = 'user_ops'))
      and a.attname = any (array['init_code', 'call_data', 'paymaster_and_data', 'signature', 'account_gas_limits', 'gas_fees'])
      and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')
  loop
    execute format('alter table %s alter column %I set compression lz4', col.tab, col.name);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;
