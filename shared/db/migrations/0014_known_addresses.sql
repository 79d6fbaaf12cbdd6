-- The addresses opscan knows on a network (op senders, paymasters, bundlers, factories), for
-- INDEXER_TRANSFERS=known: every token transfer to or from one of them is indexed, plain
-- transactions included. first_block: the block it was first seen in (a reorg below it forgets
-- it). backfilled_to: its token logs of [start_block, backfilled_to] were read by the backfill
-- (null: not yet — the address became known after blocks where it may already have received
-- tokens, e.g. an account funded before its deployment).
create table known_addresses (
  chain_id bigint not null,
  address text not null,
  first_block bigint not null,
  backfilled_to bigint,
  primary key (chain_id, address)
);
create index known_addresses_pending on known_addresses (chain_id, first_block) where backfilled_to is null;

-- A deployment indexed before this table existed knows these already; each gets its backfill.
insert into known_addresses (chain_id, address, first_block)
select chain_id, address, min(first_block) from (
  select chain_id, address, coalesce(first_op_block, created_block_number, 0) as first_block from accounts
  union all
  select chain_id, address, first_seen_block from entity_stats where kind in ('bundler', 'paymaster', 'factory')
) k
group by chain_id, address;
