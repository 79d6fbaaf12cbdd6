-- ERC-7579 modules: the ModuleInstalled / ModuleUninstalled events an op's sender emitted during
-- the op (its execution, or its validation: the installs of its deployment), from the logs of the
-- bundle transactions, one row each. ERC-7579 defines no getter for an account's modules: these
-- events are the record, and an account's current set is derived from them (the last event of each
-- (module type, module) pair an install). Ranges indexed before this table existed have no rows
-- until they are indexed again.
create table module_events (
  chain_id bigint not null,
  block_number bigint not null,
  log_index integer not null,
  tx_hash bytea not null,
  block_time bigint not null,
  user_op_hash bytea not null,
  account bytea not null,
  installed boolean not null,
  -- uint256 as the event has it; 1 to 4 are the types ERC-7579 names.
  module_type_id numeric(78,0) not null,
  module bytea not null,
  primary key (chain_id, block_number, log_index)
);
-- An account's history in order; the current set of every account (getTopModules) reads it too.
create index module_events_account on module_events (chain_id, account, block_number, log_index);
