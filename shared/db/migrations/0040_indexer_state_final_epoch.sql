-- Counts the reorgs that removed blocks the indexer held final (deeper than the network's finality
-- depth). Answers cached as final are valid only under the same count (server/cache): such a reorg
-- is rare, and then every final answer of the network is computed again.
alter table indexer_state add column final_epoch integer not null default 0;
