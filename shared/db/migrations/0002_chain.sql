-- Indexed ERC-4337 activity. Conventions:
--   * every row carries chain_id; addresses and hashes are lower-case 0x-hex text;
--   * uint256 quantities are numeric(78,0) (exact), block numbers and unix times are bigint;
--   * rows above a reorg's common ancestor are deleted and the aggregates they touched recomputed,
--     so every table always describes the canonical chain up to indexer_state.indexed_block.

-- Where the indexer stands on each network (its cursor), read by getNetworkStatus.
create table indexer_state (
  chain_id bigint primary key,
  network text not null,
  start_block bigint not null,
  -- Last block whose data is fully written; the next batch starts at indexed_block + 1.
  indexed_block bigint not null,
  indexed_block_hash text,
  head_block bigint not null default 0,
  backfill_complete boolean not null default false,
  -- Incremented on every reorg: cache keys of unfinalised data include it.
  reorg_epoch integer not null default 0,
  updated_at timestamptz not null default now()
);

-- Recent block headers (at least the reorg window) and the timestamps of blocks with activity.
create table blocks (
  chain_id bigint not null,
  number bigint not null,
  hash text not null,
  parent_hash text not null,
  timestamp bigint not null,
  primary key (chain_id, number)
);

-- Transactions that carry at least one bundle (handleOps / handleAggregatedOps).
create table bundle_transactions (
  chain_id bigint not null,
  tx_hash text not null,
  block_number bigint not null,
  block_hash text not null,
  block_time bigint not null,
  tx_index integer not null,
  tx_from text not null,
  tx_to text,
  input text not null,
  status boolean not null,
  gas_used numeric(78,0) not null,
  effective_gas_price numeric(78,0) not null,
  -- gas_used * effective_gas_price (+ L1 data fee where the chain reports one), in wei.
  fee numeric(78,0) not null,
  primary key (chain_id, tx_hash)
);
create index bundle_transactions_block on bundle_transactions (chain_id, block_number desc, tx_index desc);
create index bundle_transactions_from on bundle_transactions (chain_id, tx_from, block_number desc);

-- One row per bundle: a transaction may hold several (one per BeforeExecution, in log order).
create table bundles (
  chain_id bigint not null,
  tx_hash text not null,
  bundle_index integer not null,
  block_number bigint not null,
  block_time bigint not null,
  entry_point text not null,
  entry_point_version text not null,
  bundler text not null,           -- the transaction's sender
  beneficiary text,                -- handleOps' beneficiary argument (null if calldata not decoded)
  aggregated boolean not null default false,
  ops_count integer not null,
  ops_failed integer not null default 0,
  actual_gas_cost_sum numeric(78,0) not null default 0,
  primary key (chain_id, tx_hash, bundle_index)
);
create index bundles_block on bundles (chain_id, block_number desc, tx_hash, bundle_index);
create index bundles_bundler on bundles (chain_id, bundler, block_number desc);

create table user_ops (
  chain_id bigint not null,
  user_op_hash text not null,
  entry_point text not null,
  entry_point_version text not null,
  -- From UserOperationEvent (always present).
  sender text not null,
  paymaster text,                  -- null when the op had none (zero address in the event)
  nonce numeric(78,0) not null,
  success boolean not null,
  actual_gas_cost numeric(78,0) not null,
  actual_gas_used numeric(78,0) not null,
  -- Failure detail: execution_reverted | postop_reverted | prefund_too_low | null on success.
  failure text,
  revert_reason text,              -- raw revert bytes (hex)
  revert_message text,             -- decoded message where possible
  -- Location.
  block_number bigint not null,
  block_hash text not null,
  block_time bigint not null,
  tx_hash text not null,
  tx_index integer not null,
  bundle_index integer not null,
  op_index integer,                -- position in its bundle's calldata (null until decoded)
  log_index integer not null,      -- of its UserOperationEvent
  exec_log_from integer,           -- log index range of its execution slice [from, to)
  exec_log_to integer,
  -- Actors.
  bundler text not null,
  beneficiary text,
  factory text,                    -- from AccountDeployed when this op deployed its sender
  aggregator text,
  -- From handleOps calldata (null until decoded; v0.7+ packed fields are kept and unpacked).
  init_code text,
  call_data text,
  signature text,
  paymaster_and_data text,
  call_gas_limit numeric(78,0),
  verification_gas_limit numeric(78,0),
  pre_verification_gas numeric(78,0),
  max_fee_per_gas numeric(78,0),
  max_priority_fee_per_gas numeric(78,0),
  paymaster_verification_gas_limit numeric(78,0),
  paymaster_post_op_gas_limit numeric(78,0),
  account_gas_limits text,
  gas_fees text,
  -- ok | calldata_missing | trace_needed | decode_failed: decoding only ever adds fields.
  decode_status text not null default 'calldata_missing',
  primary key (chain_id, user_op_hash)
);
create index user_ops_latest on user_ops (chain_id, block_number desc, log_index desc);
create index user_ops_sender on user_ops (chain_id, sender, block_number desc, log_index desc);
create index user_ops_paymaster on user_ops (chain_id, paymaster, block_number desc, log_index desc) where paymaster is not null;
create index user_ops_bundler on user_ops (chain_id, bundler, block_number desc, log_index desc);
create index user_ops_tx on user_ops (chain_id, tx_hash, log_index);
create index user_ops_hash on user_ops (user_op_hash);

-- Decoded account calls of an op (execute, executeBatch variants, ERC-7579 execute).
create table user_op_calls (
  chain_id bigint not null,
  user_op_hash text not null,
  call_index integer not null,
  target text not null,
  value numeric(78,0) not null,
  data text not null,
  primary key (chain_id, user_op_hash, call_index)
);
create index user_op_calls_target on user_op_calls (chain_id, target);

-- Smart accounts: every sender seen, with its deployment when an AccountDeployed was indexed.
create table accounts (
  chain_id bigint not null,
  address text not null,
  factory text,
  created_user_op_hash text,
  created_tx_hash text,
  created_block_number bigint,
  created_block_time bigint,
  user_ops_count bigint not null default 0,
  first_op_block bigint,
  last_op_block bigint,
  primary key (chain_id, address)
);
create index accounts_factory on accounts (chain_id, factory, created_block_number desc, address) where factory is not null;

-- Incremental per-entity totals, kept in the same transaction as the rows they count.
-- kind: bundler | paymaster | factory | beneficiary.
create table entity_stats (
  chain_id bigint not null,
  kind text not null,
  address text not null,
  user_ops_count bigint not null default 0,
  bundles_count bigint not null default 0,
  accounts_count bigint not null default 0,
  -- Σ actualGasCost of the entity's ops (gas sponsored for a paymaster, collected for a bundler).
  actual_gas_cost_sum numeric(78,0) not null default 0,
  -- Σ bundle transaction fees (bundlers).
  tx_fee_sum numeric(78,0) not null default 0,
  first_seen_block bigint not null,
  first_seen_day integer not null,
  last_seen_block bigint not null,
  primary key (chain_id, kind, address)
);
create index entity_stats_top on entity_stats (chain_id, kind, user_ops_count desc, address);
create index entity_stats_first_day on entity_stats (chain_id, kind, first_seen_day);

-- Per network and UTC day (floor(blockTime / 86400)); cumulative totals are window sums at read time.
create table daily_stats (
  chain_id bigint not null,
  day integer not null,
  user_ops bigint not null default 0,
  bundles bigint not null default 0,
  wallets_created bigint not null default 0,
  gas_cost_collected numeric(78,0) not null default 0,
  active_wallets bigint not null default 0,
  primary key (chain_id, day)
);

create table daily_active_wallets (
  chain_id bigint not null,
  day integer not null,
  address text not null,
  primary key (chain_id, day, address)
);

-- Every log of every bundle transaction (getLogFromIndex, getUserOpLogs, metadata).
create table logs (
  chain_id bigint not null,
  tx_hash text not null,
  log_index integer not null,      -- block-level index
  tx_log_index integer not null,   -- index within the transaction
  block_number bigint not null,
  address text not null,
  topics text[] not null,
  data text not null,
  user_op_hash text,               -- the op whose execution slice holds the log
  primary key (chain_id, tx_hash, log_index)
);
create index logs_user_op on logs (chain_id, user_op_hash, log_index) where user_op_hash is not null;
create index logs_block on logs (chain_id, block_number);

-- ERC-20 / ERC-721 / ERC-1155 transfers inside bundle transactions, and native value sent by
-- decoded calls (standard NATIVE, log_index null → sequence in batch_index).
create table token_transfers (
  chain_id bigint not null,
  tx_hash text not null,
  log_index integer not null,      -- -1 - call index for NATIVE transfers
  batch_index integer not null default 0, -- position inside an ERC-1155 TransferBatch
  block_number bigint not null,
  block_time bigint not null,
  user_op_hash text,
  standard text not null,          -- ERC20 | ERC721 | ERC1155 | NATIVE
  token text,                      -- null for NATIVE
  from_address text not null,
  to_address text not null,
  value numeric(78,0) not null,
  token_id numeric(78,0),
  primary key (chain_id, tx_hash, log_index, batch_index)
);
create index token_transfers_from on token_transfers (chain_id, from_address, block_number desc);
create index token_transfers_to on token_transfers (chain_id, to_address, block_number desc);
create index token_transfers_user_op on token_transfers (chain_id, user_op_hash);

-- Token metadata read once per token (name, symbol, decimals) for transfer and balance answers.
create table tokens (
  chain_id bigint not null,
  address text not null,
  standard text not null,
  name text,
  symbol text,
  decimals integer,
  primary key (chain_id, address)
);

-- Execution trace of each op (debug_traceTransaction callTracer subtree), or why there is none.
create table user_op_traces (
  chain_id bigint not null,
  user_op_hash text not null,
  status text not null,            -- ok | unavailable
  trace jsonb,
  primary key (chain_id, user_op_hash)
);

-- Address-level transactions the API serves (getAddressTransactions): each bundle transaction
-- an address took part in, as op sender, bundler, call target or transfer party.
create table address_transactions (
  chain_id bigint not null,
  address text not null,
  tx_hash text not null,
  block_number bigint not null,
  tx_index integer not null,
  primary key (chain_id, address, tx_hash)
);
create index address_transactions_recent on address_transactions (chain_id, address, block_number desc, tx_index desc);

-- EntryPoint stake-manager events (Deposited, Withdrawn, Stake*): paymaster deposits.
create table entry_point_deposits (
  chain_id bigint not null,
  block_number bigint not null,
  log_index integer not null,
  tx_hash text not null,
  entry_point text not null,
  account text not null,
  event text not null,             -- Deposited | Withdrawn | StakeLocked | StakeUnlocked | StakeWithdrawn
  amount numeric(78,0),            -- Withdrawn / StakeWithdrawn amount
  total_deposit numeric(78,0),     -- Deposited: the account's deposit after the event
  primary key (chain_id, block_number, log_index)
);
create index entry_point_deposits_account on entry_point_deposits (chain_id, account, block_number desc, log_index desc);

-- The outbox: durable events for the webhook dispatcher, written in the indexer's transaction,
-- read in id order by the dispatcher's cursor (NOTIFY opscan_outbox wakes it).
-- type: user_operation | account_deployed | reorg.
create table outbox_events (
  id bigserial primary key,
  chain_id bigint not null,
  type text not null,
  block_number bigint not null,
  user_op_hash text,
  payload jsonb not null,
  created_at timestamptz not null default now()
);
create index outbox_events_chain on outbox_events (chain_id, id);
