-- An op's decoded account calls move from user_op_calls (one row per call: a tuple header, chain id,
-- the op's 33-byte hash and a primary-key entry each, ~300 bytes per op on the realistic devnet
-- beside ~110 bytes of call data) into three arrays on the op's own row, in call order. Measured on
-- the realistic devnet: user_ops + user_op_calls 1,785 → 1,449 bytes per op.
-- calls_target[i], calls_value[i], calls_data[i] are the i-th call (1-based); all three are empty
-- arrays for an op without decoded calls.

alter table user_ops
  add column calls_target bytea[] not null default '{}',
  add column calls_value numeric(78, 0)[] not null default '{}',
  add column calls_data bytea[] not null default '{}';

update user_ops u
set calls_target = c.targets, calls_value = c.vals, calls_data = c.datas
from (
  select chain_id, user_op_hash,
         array_agg(target order by call_index) as targets,
         array_agg(value order by call_index) as vals,
         array_agg(data order by call_index) as datas
  from user_op_calls
  group by chain_id, user_op_hash
) c
where u.chain_id = c.chain_id and opscan_hex_bytes(u.user_op_hash) = c.user_op_hash;

drop table user_op_calls;

-- opscan_ensure_chain_partitions (0010) gives a new chain a partition of each of these.
create or replace function opscan_partitioned_tables() returns text[] language sql immutable as $$
  select array['user_ops', 'token_transfers', 'address_transactions', 'user_op_traces', 'outbox_events']
$$;

-- lz4 for the new columns, as 0011 set it for the others (builds without lz4, PGlite, keep pglz).
do $$
declare
  part regclass;
begin
  for part in select 'user_ops'::regclass union all select inhrelid::regclass from pg_inherits where inhparent = 'user_ops'::regclass loop
    execute format('alter table %s alter column calls_target set compression lz4, alter column calls_value set compression lz4, alter column calls_data set compression lz4', part);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;
