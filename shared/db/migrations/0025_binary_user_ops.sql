-- user_ops, bundles, user_op_traces, accounts and entity_stats store bytes as bytea, as 0022 did for
-- the other chain tables (the convention: shared/db/client.ts): every hash, address and byte string
-- (calldata, signature, initCode, paymasterAndData, revert data, packed gas fields). Gas, fees,
-- values and nonces stay numeric; words (versions, failure, decode status, kinds) stay text.
-- One rewrite per table under its lock, indexes rebuilt: run with the indexer stopped.

-- The rewrite compresses with lz4 (this transaction's default; builds without lz4, PGlite, keep
-- pglz); ALTER … TYPE resets the columns' compression, which gets lz4 again at the end (as in 0022).
do $$
begin
  perform set_config('default_toast_compression', 'lz4', true);
exception when others then
  null;
end $$;

alter table user_ops
  alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash),
  alter column entry_point type bytea using opscan_hex_bytes(entry_point),
  alter column sender type bytea using opscan_hex_bytes(sender),
  alter column paymaster type bytea using opscan_hex_bytes(paymaster),
  alter column revert_reason type bytea using opscan_hex_bytes(revert_reason),
  alter column block_hash type bytea using opscan_hex_bytes(block_hash),
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash),
  alter column bundler type bytea using opscan_hex_bytes(bundler),
  alter column beneficiary type bytea using opscan_hex_bytes(beneficiary),
  alter column factory type bytea using opscan_hex_bytes(factory),
  alter column aggregator type bytea using opscan_hex_bytes(aggregator),
  alter column init_code type bytea using opscan_hex_bytes(init_code),
  alter column call_data type bytea using opscan_hex_bytes(call_data),
  alter column signature type bytea using opscan_hex_bytes(signature),
  alter column paymaster_and_data type bytea using opscan_hex_bytes(paymaster_and_data),
  alter column account_gas_limits type bytea using opscan_hex_bytes(account_gas_limits),
  alter column gas_fees type bytea using opscan_hex_bytes(gas_fees),
  alter column paymaster_signature type bytea using opscan_hex_bytes(paymaster_signature),
  alter column target type bytea using opscan_hex_bytes(target);

alter table bundles
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash),
  alter column entry_point type bytea using opscan_hex_bytes(entry_point),
  alter column bundler type bytea using opscan_hex_bytes(bundler),
  alter column beneficiary type bytea using opscan_hex_bytes(beneficiary);

alter table user_op_traces alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash);

alter table accounts
  alter column address type bytea using opscan_hex_bytes(address),
  alter column factory type bytea using opscan_hex_bytes(factory),
  alter column created_user_op_hash type bytea using opscan_hex_bytes(created_user_op_hash),
  alter column created_tx_hash type bytea using opscan_hex_bytes(created_tx_hash);

alter table entity_stats alter column address type bytea using opscan_hex_bytes(address);

-- lz4 again for every compressible column of the rewritten tables and their partitions (as 0011).
do $$
declare
  col record;
begin
  for col in
    select a.attrelid::regclass as tab, a.attname as name
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    where (c.relname = any (array['user_ops', 'bundles', 'user_op_traces', 'accounts', 'entity_stats'])
           or c.oid in (select inhrelid from pg_inherits where inhparent::regclass::text = any (array['user_ops', 'user_op_traces'])))
      and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')
  loop
    execute format('alter table %s alter column %I set compression lz4', col.tab, col.name);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;

-- No toast_tuple_target on user_ops: PostgreSQL compresses a row's values only once the row passes
-- 2 KB (TOAST_TUPLE_THRESHOLD, fixed at build time), whatever the target; as bytea almost every op
-- row is under it, and a target of 128 only pushed the values of the few longer rows out of line
-- (+85 bytes per op on the realistic devnet: notes/opsbytea.md).
