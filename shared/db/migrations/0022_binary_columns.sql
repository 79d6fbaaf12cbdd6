-- Bytes as bytea instead of lower-case 0x-hex text: half the size of every hash, address, topic and
-- calldata value (and of the indexes over them), hex only at the edges (the convention is written
-- where the driver's type parsers are registered: shared/db/client.ts). Each table is rewritten
-- once by ALTER … TYPE (one pass per table, its indexes rebuilt); the time per million rows is in
-- notes/storebinary.md. Run with the indexer stopped: the tables are locked while rewritten.

-- 0x-hex text → bytes ('0x' → empty), for the rewrite and for any SQL that meets an old value.
create function opscan_hex_bytes(hex text) returns bytea language sql immutable strict parallel safe as $$
  select decode(substr(hex, 3), 'hex')
$$;
-- An array as one bytea[] literal ({\\x…,\\x…}): 'x' is no hex digit, so '0x' only starts a value.
-- Cheaper than decoding element by element: 3.2 s instead of 4.4 s for 300,000 three-topic arrays.
create function opscan_hex_bytes(hexes text[]) returns bytea[] language sql immutable strict parallel safe as $$
  select ('{' || replace(array_to_string(hexes, ','), '0x', '\\x') || '}')::bytea[]
$$;

-- ALTER … TYPE resets a column's compression to the default (pglz), which 0011 replaced with lz4 for
-- these tables. The rewrite compresses with lz4 (this transaction's default; builds without lz4,
-- PGlite, keep pglz) and the columns get lz4 again at the end.
do $$
begin
  perform set_config('default_toast_compression', 'lz4', true);
exception when others then
  null;
end $$;

alter table logs
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash),
  alter column address type bytea using opscan_hex_bytes(address),
  alter column topics type bytea[] using opscan_hex_bytes(topics),
  alter column data type bytea using opscan_hex_bytes(data),
  alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash);

alter table token_transfers
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash),
  alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash),
  alter column token type bytea using opscan_hex_bytes(token),
  alter column from_address type bytea using opscan_hex_bytes(from_address),
  alter column to_address type bytea using opscan_hex_bytes(to_address);

alter table tokens alter column address type bytea using opscan_hex_bytes(address);

alter table user_op_calls
  alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash),
  alter column target type bytea using opscan_hex_bytes(target),
  alter column data type bytea using opscan_hex_bytes(data);

alter table address_transactions
  alter column address type bytea using opscan_hex_bytes(address),
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash);

alter table bundle_transactions
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash),
  alter column block_hash type bytea using opscan_hex_bytes(block_hash),
  alter column tx_from type bytea using opscan_hex_bytes(tx_from),
  alter column tx_to type bytea using opscan_hex_bytes(tx_to),
  alter column input type bytea using opscan_hex_bytes(input);

-- lz4 again for every compressible column of the rewritten tables and their partitions (as 0011).
do $$
declare
  col record;
begin
  for col in
    select a.attrelid::regclass as tab, a.attname as name
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    where (c.relname = any (array['logs', 'token_transfers', 'user_op_calls', 'address_transactions', 'bundle_transactions'])
           or c.oid in (select inhrelid from pg_inherits where inhparent::regclass::text = any (array['logs', 'token_transfers', 'user_op_calls', 'address_transactions'])))
      and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')
  loop
    execute format('alter table %s alter column %I set compression lz4', col.tab, col.name);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;
