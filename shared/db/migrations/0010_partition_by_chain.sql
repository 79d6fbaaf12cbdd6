-- The large per-network tables become list-partitioned by chain id, one partition per network,
-- so that a network can be dropped, vacuumed, reindexed or moved on its own and every query that
-- names a chain reads one partition. Each table keeps its name, columns, defaults, primary key and
-- indexes (same names: created on the partitioned table, so every partition gets them); a DEFAULT
-- partition takes the rows of a chain that has no partition of its own yet, and
-- opscan_ensure_chain_partitions(chain) (called when the indexer starts a network) gives a chain its
-- own partitions, moving any rows it had in the default ones. Existing data is moved here.
--
-- outbox_events' primary key becomes (chain_id, id): a partitioned table's unique keys must include
-- the partition key; ids still come from the one sequence, so they stay unique and ordered.

create function opscan_partitioned_tables() returns text[] language sql immutable as $$
  select array['user_ops', 'user_op_calls', 'logs', 'token_transfers', 'address_transactions', 'user_op_traces', 'outbox_events']
$$;

do $$
declare
  t text;
  old text;
  idx record;
  seq text;
begin
  foreach t in array opscan_partitioned_tables() loop
    old := t || '_unpartitioned';
    execute format('alter table %I rename to %I', t, old);
    execute format('create table %I (like %I including defaults including constraints including generated including comments) partition by list (chain_id)', t, old);
    -- Keys and indexes by their definitions, under their own names (the old ones are renamed first).
    for idx in
      select i.relname as name, pg_get_indexdef(i.oid) as def, c.conname is not null as is_pkey
      from pg_index x
      join pg_class i on i.oid = x.indexrelid
      left join pg_constraint c on c.conindid = i.oid and c.contype = 'p'
      where x.indrelid = old::regclass
    loop
      execute format('alter index %I rename to %I', idx.name, idx.name || '_unpartitioned');
      if idx.is_pkey then
        if t = 'outbox_events' then
          execute format('alter table %I add constraint %I primary key (chain_id, id)', t, idx.name);
        else
          execute format('alter table %I add constraint %I %s', t, idx.name,
            (select pg_get_constraintdef(c.oid) from pg_constraint c where c.conname = idx.name || '_unpartitioned' and c.conrelid = old::regclass));
        end if;
      else
        execute regexp_replace(idx.def, ' ON (\S+\.)?' || old || ' ', ' ON ' || quote_ident(t) || ' ');
      end if;
    end loop;
    -- A serial column's sequence belongs to its table: hand it to the new one before the old goes.
    for seq in select s.relname from pg_depend d join pg_class s on s.oid = d.objid and s.relkind = 'S' where d.refobjid = old::regclass and d.deptype = 'a' loop
      execute format('alter sequence %I owned by %I.id', seq, t);
    end loop;
    execute format('create table %I partition of %I default', t || '_default', t);
  end loop;
end
$$;

-- Gives `chain` its own partition of every partitioned table (named <table>_<chain>), moving the rows
-- it has in the default partitions. Idempotent; safe while other chains are written.
create function opscan_ensure_chain_partitions(chain bigint) returns void language plpgsql as $$
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
    execute format('create table %I (like %I including defaults including constraints including generated)', part, t);
    execute format('insert into %I select * from %I where chain_id = %s', part, t || '_default', chain);
    execute format('delete from %I where chain_id = %s', t || '_default', chain);
    execute format('alter table %I attach partition %I for values in (%s)', t, part, chain);
  end loop;
end
$$;

-- Existing data: each chain into its own partitions, then the old tables go.
do $$
declare
  chain bigint;
  t text;
begin
  for chain in
    select chain_id from user_ops_unpartitioned union select chain_id from logs_unpartitioned
    union select chain_id from token_transfers_unpartitioned union select chain_id from outbox_events_unpartitioned
    union select chain_id from indexer_state
  loop
    perform opscan_ensure_chain_partitions(chain);
  end loop;
  foreach t in array opscan_partitioned_tables() loop
    execute format('insert into %I select * from %I', t, t || '_unpartitioned');
    execute format('drop table %I', t || '_unpartitioned');
  end loop;
end
$$;
