-- A rotation issues a new key to the same customer: the new key shares its predecessor's daily and
-- monthly quota counts instead of starting afresh. quota_holder_id is the first key of the rotation
-- chain, whose id the counts are kept under; null: the key itself (it was not issued by a rotation).
alter table api_keys add column quota_holder_id bigint references api_keys(id);

-- Keys rotated before this migration: follow each chain from its first key along replaced_by.
with recursive chain(id, holder) as (
  select k.id, k.id from api_keys k where not exists (select 1 from api_keys p where p.replaced_by = k.id)
  union all
  select k.replaced_by, c.holder from chain c join api_keys k on k.id = c.id where k.replaced_by is not null
)
update api_keys set quota_holder_id = chain.holder from chain where api_keys.id = chain.id and chain.holder <> chain.id;

create index api_keys_quota_holder on api_keys (quota_holder_id) where quota_holder_id is not null;
