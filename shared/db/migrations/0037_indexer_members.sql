-- The indexer processes sharing one database (indexer/membership.ts): each keeps its row alive with a
-- heartbeat; the live rows decide which process indexes which network, and a row whose heartbeat
-- stopped names a dead process whose networks the others take over (and whose sessions they end).
-- Queries: shared/db/tables/indexerMembers.ts.
create table indexer_members (
  member_id text primary key,
  -- Chain ids this process may index (NETWORKS, or INDEXER_NETWORKS when it is pinned).
  chain_ids bigint[] not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now()
);
