-- Webhooks: subscriptions owned by an API key, the deliveries the dispatcher owes them, and the
-- log of every attempt. See webhooks/ (the dispatcher) and research/delivery-and-api.md §1.

create table webhooks (
  id text primary key,                      -- wh_<ulid>
  api_key_id bigint not null references api_keys(id) on delete cascade,
  api_name text not null,
  url text not null,                        -- as the caller sent it (echoed back)
  filter text not null check (filter in ('ADDRESS', 'FACTORY', 'BUNDLER', 'PAYMASTER')),
  identifier text not null,                 -- as the caller sent it (echoed back)
  address text not null,                    -- identifier in lower case: what events are matched on
  chain_id bigint not null,
  -- The signing secret, AES-256-GCM-encrypted (never hashed: the dispatcher needs it to sign).
  secret_ciphertext text not null,
  status text not null default 'enabled' check (status in ('enabled', 'disabled')),
  disabled_reason text,                     -- gone (410) | failing (5 days without success)
  failing_since timestamptz,
  last_success_at timestamptz,
  created_at timestamptz not null default now()
);
-- An identical webhook of the same key is a conflict (409), not a second subscription.
create unique index webhooks_identity on webhooks (api_key_id, url, filter, address, chain_id);
-- The matcher's lookup: which enabled webhooks care about (chain, filter, address).
create index webhooks_match on webhooks (chain_id, filter, address) where status = 'enabled';

-- One row per (webhook, event): written before the first attempt, so nothing matched is lost.
-- `id` is the Standard Webhooks `webhook-id`, the same on every retry and replay.
create table webhook_deliveries (
  id text primary key,                      -- msg_<ulid>
  webhook_id text not null references webhooks(id) on delete cascade,
  -- What was delivered: 'outbox:<outbox_events.id>' or 'test:<ulid>'. Unique per webhook, so the
  -- matcher can run twice over the same events without sending anything twice.
  event_key text not null,
  event_type text not null,                 -- user_operation | account_deployed | reorg | webhook.test
  chain_id bigint not null,
  user_op_hash text,                        -- for reorg notices about delivered ops
  body text not null,                       -- the exact bytes sent (text, not jsonb: jsonb reorders keys)
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed', 'cancelled')),
  -- Attempts claimed so far. A claim also pushes next_attempt_at one lease ahead, so a delivery
  -- whose dispatcher died is claimed again once the lease runs out.
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  unique (webhook_id, event_key)
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_user_op on webhook_deliveries (chain_id, user_op_hash) where user_op_hash is not null;
create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, id desc);

create table webhook_attempts (
  delivery_id text not null references webhook_deliveries(id) on delete cascade,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer not null,
  response_status integer,                  -- null when no response (timeout, refused, blocked)
  error text,                               -- why the attempt failed, when it did
  response_snippet text,                    -- first 2 KB of the response body
  primary key (delivery_id, attempt)
);

-- The matcher's position in the outbox, per chain (one indexer writes a chain, so a chain's ids
-- commit in order; a global cursor could skip an id still in flight on another chain).
create table webhook_outbox_cursors (
  chain_id bigint primary key,
  last_event_id bigint not null default 0,
  updated_at timestamptz not null default now()
);

-- The secret-encryption key generated when WEBHOOK_SECRET_KEY is unset (embedded default), shared
-- by every process through the database. One row.
create table webhook_generated_keys (
  id integer primary key check (id = 1),
  key text not null,
  created_at timestamptz not null default now()
);
