-- EIP-7702 authorizations: one row per tuple of a transaction's authorization list, in the
-- transactions the indexer reads (INDEXER_DELEGATIONS). `authority` is recovered from the tuple's
-- signature (null when none recovers); `delegate` is null when the tuple clears the delegation
-- (address zero). `status` says whether it took effect: effective, or why not (wrong_chain_id,
-- wrong_nonce, invalid_signature); unverified when the node could not tell the authority's nonce.
create table delegations (
  chain_id bigint not null,
  block_number bigint not null,
  tx_index integer not null,
  auth_index integer not null,
  tx_hash bytea not null,
  block_time bigint not null,
  authority bytea,
  delegate bytea,
  authorization_chain_id numeric(78,0) not null,
  authorization_nonce numeric(78,0) not null,
  via_user_op boolean not null,
  status text not null,
  primary key (chain_id, tx_hash, auth_index)
);

-- What a reorg removes (deleteAbove).
create index delegations_block on delegations (chain_id, block_number);

-- An authority's history, newest first (getAccountDelegations, accountDetail.delegation).
create index delegations_authority on delegations (chain_id, authority, block_number desc, tx_index desc, auth_index desc);
