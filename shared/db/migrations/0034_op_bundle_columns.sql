-- Issue 34: an op's row without the values its bundle and bundle transaction hold. Every op answer
-- reads its bundle transaction (for the input) already; the bundle is one more primary-key lookup.
--   block_hash (33 B): the transaction's (bundle_transactions.block_hash). The indexer takes both
--     from the same receipt (indexer/decode/decodeTransaction.ts), so they are always equal.
--   entry_point (21 B): its bundle's (bundles.entry_point by tx_hash, bundle_index). A bundle
--     gathers the ops of one EntryPoint's events only (indexer/decode/bundleLogs.ts), so equal too.
--   beneficiary (21 B): becomes beneficiary_unlike_bundle, set only where the op's beneficiary is not
--     its bundle's: the bundle takes the first beneficiary among its ops, so an op whose calldata was
--     not found (null) or, in a nested bundle, matched to another call, may differ. `\x` (no real
--     address is empty) stands for "none" where the bundle has one. Reads take
--     nullif(coalesce(beneficiary_unlike_bundle, bundles.beneficiary), '\x') (userOps.ts).
-- block_time (8 B) stays: daily stats, active wallets and entity stats group ops by day.
-- entry_point_version (5 B) stays: it picks the struct layout that reads the op's fields back from
-- the input (0028), in SQL too.
--
-- Run with the indexer stopped: user_ops is rewritten once (one transaction, as 0028).

-- Refuse (and roll back) a database whose copies differ: dropping them would change answers. The
-- indexer never writes such rows (ops, their bundle and their transaction come from one receipt).
do $$
declare
  bad record;
begin
  select u.chain_id, u.user_op_hash into bad from user_ops u
  where not exists (select 1 from bundle_transactions bt
                    where bt.chain_id = u.chain_id and bt.tx_hash = u.tx_hash and bt.block_hash = u.block_hash)
  limit 1;
  if found then
    raise exception 'op % (chain %) has no bundle_transactions row with its block hash', '0x' || encode(bad.user_op_hash, 'hex'), bad.chain_id;
  end if;
  select u.chain_id, u.user_op_hash into bad from user_ops u
  where not exists (select 1 from bundles b
                    where b.chain_id = u.chain_id and b.tx_hash = u.tx_hash and b.bundle_index = u.bundle_index and b.entry_point = u.entry_point)
  limit 1;
  if found then
    raise exception 'op % (chain %) has no bundles row with its EntryPoint', '0x' || encode(bad.user_op_hash, 'hex'), bad.chain_id;
  end if;
end $$;

alter table user_ops drop column block_hash, drop column entry_point;
alter table user_ops rename column beneficiary to beneficiary_unlike_bundle;

-- The rewrite compresses the long rows' values with lz4 where the build has it (PGlite: pglz), as 0028.
select set_config('default_toast_compression', 'lz4', true)
from pg_settings where name = 'default_toast_compression' and 'lz4' = any (enumvals);

-- The rewrite (ALTER … TYPE, as 0028: an UPDATE would leave every row's old version behind) also
-- drops the old rows' values of the columns dropped above. (A function: a CASE in the USING of a
-- partitioned table fails on PGlite.)
create function opscan_0034_unlike_bundle(chain bigint, tx bytea, bundle integer, op_beneficiary bytea) returns bytea language sql stable as $$
  select case when op_beneficiary is not distinct from b.beneficiary then null else coalesce(op_beneficiary, '\x'::bytea) end
  from bundles b where b.chain_id = chain and b.tx_hash = tx and b.bundle_index = bundle
$$;
alter table user_ops
  alter column beneficiary_unlike_bundle type bytea
  using opscan_0034_unlike_bundle(chain_id, tx_hash, bundle_index, beneficiary_unlike_bundle);
drop function opscan_0034_unlike_bundle(bigint, bytea, integer, bytea);

-- At most an address: stored plain, never compressed or moved out of line (ALTER … TYPE reset the
-- column's compression, which its values would never use).
alter table user_ops alter column beneficiary_unlike_bundle set storage plain;
