-- The indexer writes large values once (bundle inputs, op calldata, log data, traces, outbox
-- payloads) and the default pglz compression of those was most of PostgreSQL's share of a backfill:
-- COPY of 200 MB of calldata-like rows took 7 s with pglz and 2 s with lz4 on the same machine.
-- lz4 for every compressible column of the indexed tables and of each of their partitions (the
-- ALTER does not reach them from the parent), and partitions made later copy it from their parent.
-- Builds without lz4 (PGlite) keep pglz. Values already stored keep their compression.
do $$
declare
  col record;
begin
  for col in
    select a.attrelid::regclass as tab, a.attname as name
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    where (c.relname = any (opscan_partitioned_tables() || array['bundle_transactions', 'outbox_dead_letters'])
           or c.oid in (select inhrelid from pg_inherits where inhparent::regclass::text = any (opscan_partitioned_tables())))
      and a.attnum > 0 and not a.attisdropped and a.attstorage in ('x', 'm')
  loop
    execute format('alter table %s alter column %I set compression lz4', col.tab, col.name);
  end loop;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;

create or replace function opscan_ensure_chain_partitions(chain bigint) returns void language plpgsql as $$
declare
  t text;
  part text;
begin
  foreach t in array opscan_partitioned_tables() loop
    part := t || '_' || chain;
    continue when to_regclass(part) is not null;
    -- One creator at a time per table; the default partition is locked while rows move out of it.
    perform pg_advisory_xact_lock(hashtext('opscan_partition:' || t));
    continue when to_regclass(part) is not null;
    execute format('lock table %I in access exclusive mode', t || '_default');
    execute format('create table %I (like %I including defaults including constraints including generated including compression)', part, t);
    execute format('insert into %I select * from %I where chain_id = %s', part, t || '_default', chain);
    execute format('delete from %I where chain_id = %s', t || '_default', chain);
    execute format('alter table %I attach partition %I for values in (%s)', t, part, chain);
  end loop;
end
$$;
