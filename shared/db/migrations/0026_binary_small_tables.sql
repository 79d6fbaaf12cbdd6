-- The hashes and addresses still kept as 0x-hex text outside the op tables (user_ops, bundles,
-- user_op_traces, accounts, entity_stats: 0025) become bytea as in 0022 (half the size of each value
-- and of the keys and indexes over them; hex only at the edges, shared/db/client.ts). Each table is
-- rewritten once by ALTER … TYPE, its indexes rebuilt. Run with the indexer and the webhook
-- dispatcher stopped: the tables are locked while rewritten.
-- Left as text: entry_point_deposits.event (one of five names of at most 14 characters: a few bytes
-- a row more than a code, notes/smallbytea.md), and values kept per API key or per webhook
-- (api_keys.key_hash, webhooks.address), which cost nothing per op.

-- ALTER … TYPE resets a column's compression to the default (pglz); outbox_events is the one table
-- here 0011 had given lz4. The rewrite compresses with lz4 (builds without it, PGlite, keep pglz).
do $$
begin
  perform set_config('default_toast_compression', 'lz4', true);
exception when others then
  null;
end $$;

alter table entry_point_deposits
  alter column tx_hash type bytea using opscan_hex_bytes(tx_hash),
  alter column entry_point type bytea using opscan_hex_bytes(entry_point),
  alter column account type bytea using opscan_hex_bytes(account);

alter table known_addresses alter column address type bytea using opscan_hex_bytes(address);

alter table daily_active_wallets alter column address type bytea using opscan_hex_bytes(address);

-- A closed day's active wallets (0016): their 20-byte addresses one after the other, in address
-- order, instead of comma-separated hex ('' → empty bytes; null, a day still open, stays null).
-- 'x' is no hex digit: removing '0x' and ',' leaves the addresses' hex digits alone.
alter table daily_stats
  alter column active_wallet_list type bytea using decode(replace(replace(active_wallet_list, ',', ''), '0x', ''), 'hex');

alter table blocks
  alter column hash type bytea using opscan_hex_bytes(hash),
  alter column parent_hash type bytea using opscan_hex_bytes(parent_hash);

alter table indexer_state alter column indexed_block_hash type bytea using opscan_hex_bytes(indexed_block_hash);

alter table outbox_events alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash);

alter table webhook_deliveries alter column user_op_hash type bytea using opscan_hex_bytes(user_op_hash);

-- lz4 again for the compressible columns of outbox_events and its partitions (as 0011).
do $$
declare
  col record;
begin
  for col in
    select a.attrelid::regclass as tab, a.attname as name
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    where (c.relname = 'outbox_events' or c.oid in (select inhrelid from pg_inherits where inhparent::regclass::text = 'outbox_events'))
      and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')
  loop
    execute format('alter table %s alter column %I set compression lz4', col.tab, col.name);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;
