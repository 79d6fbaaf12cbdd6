-- getDailyMetrics answers each day's active wallets (thousands of addresses a day). Aggregating them
-- from daily_active_wallets on every uncached call was most of its cost; a closed day (one before
-- the network's latest day with activity: block times never decrease, so it gets no new op) keeps
-- them here once, comma-separated in address order ('' when none), as the read would have built
-- them. The latest day's is null and read from daily_active_wallets. The indexer closes days as it
-- moves past them and a reorg rebuilds the rows of the days it touched (shared/db/tables/dailyStats.ts).
alter table daily_stats add column active_wallet_list text;

-- A deployment indexed before this column existed: close the days it already moved past.
update daily_stats d
set active_wallet_list = coalesce(
  (select string_agg(w.address, ',' order by w.address) from daily_active_wallets w where w.chain_id = d.chain_id and w.day = d.day),
  '')
where d.day < (select max(l.day) from daily_stats l where l.chain_id = d.chain_id);
