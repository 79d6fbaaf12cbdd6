-- What a bundle earned its bundler. A bundle's revenue is its ops' actualGasCost (actual_gas_cost_sum,
-- paid to its beneficiary); its fee is its share of its transaction's fee (fee_share); its profit is
-- the difference. A transaction with one bundle (nearly every one) gives it the whole fee; several
-- bundles of one transaction split the fee in proportion to their revenue, rounded down, the last
-- bundle taking what rounding leaves (equal parts when none of them collected anything), so the
-- shares of a transaction add up to its fee exactly. indexer/decode/bundleFees.ts is the same rule.
alter table bundles add column fee_share numeric(78,0);

with parts as (
  select b.chain_id, b.tx_hash, b.bundle_index, t.fee,
         case when sum(b.actual_gas_cost_sum) over tx > 0
              then div(t.fee * b.actual_gas_cost_sum, sum(b.actual_gas_cost_sum) over tx)
              else div(t.fee, count(*) over tx) end as rounded_share,
         b.bundle_index = max(b.bundle_index) over tx as is_last
  from bundles b
  join bundle_transactions t on t.chain_id = b.chain_id and t.tx_hash = b.tx_hash
  window tx as (partition by b.chain_id, b.tx_hash)
), shares as (
  select chain_id, tx_hash, bundle_index,
         case when is_last then fee - (sum(rounded_share) over tx - rounded_share) else rounded_share end as fee_share
  from parts
  window tx as (partition by chain_id, tx_hash)
)
update bundles b set fee_share = s.fee_share
from shares s
where b.chain_id = s.chain_id and b.tx_hash = s.tx_hash and b.bundle_index = s.bundle_index;

-- lz4, as every compressible column of the indexed tables.
select opscan_columns_lz4('bundles', array['fee_share']);

-- Σ fee_share of the day's bundles: the day's bundlers' profit is gas_cost_collected − bundle_fees.
alter table daily_stats add column bundle_fees numeric(78,0) not null default 0;

update daily_stats d set bundle_fees = s.fees
from (select chain_id, (block_time / 86400)::integer as day, sum(fee_share) as fees from bundles group by 1, 2) s
where d.chain_id = s.chain_id and d.day = s.day and s.fees is not null;

-- Per bundler and UTC day: its bundles, their revenue and their fee shares, so that a bundler's
-- totals over the last N days read N rows at most (getTopBundlers' `days`).
create table bundler_days (
  chain_id bigint not null,
  bundler bytea not null,
  day integer not null,
  bundles bigint not null,
  revenue numeric(78,0) not null,
  fees numeric(78,0) not null,
  primary key (chain_id, bundler, day)
);

insert into bundler_days (chain_id, bundler, day, bundles, revenue, fees)
select chain_id, bundler, (block_time / 86400)::integer, count(*), sum(actual_gas_cost_sum), coalesce(sum(fee_share), 0)
from bundles
group by 1, 2, 3;
