-- API keys as a product: plans (rates and quotas an operator sells), key scopes and lifecycle,
-- and per-key usage.

-- A plan is what a key may do per unit of time. Null in a quota column means "no cap".
create table api_plans (
  id bigserial primary key,
  name text not null unique,
  -- Token bucket: refilled at rate_limit_per_second, holding at most `burst` tokens.
  rate_limit_per_second integer not null check (rate_limit_per_second > 0),
  burst integer not null check (burst > 0),
  -- Quotas per UTC day and per UTC calendar month.
  requests_per_day bigint check (requests_per_day > 0),
  requests_per_month bigint check (requests_per_month > 0),
  -- How many webhooks a key of this plan may own (0: none).
  webhooks_allowed integer check (webhooks_allowed >= 0),
  -- Network names a key of this plan may read (null: all the deployment indexes).
  networks text[],
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

alter table api_keys
  -- Null: no plan; the key keeps rate_limit_per_second (or the deployment's default) and no quota.
  add column plan_id bigint references api_plans(id),
  -- Capabilities: read (the data API), webhooks (manage its webhooks), admin (operator endpoints).
  add column scopes text[] not null default '{read,webhooks}',
  -- Network names the key may read (null: all); intersected with its plan's.
  add column networks text[],
  add column expires_at timestamptz,
  add column last_used_at timestamptz,
  -- Rotation: the key issued to replace this one (this one stays valid until expires_at).
  add column replaced_by bigint references api_keys(id),
  add column updated_at timestamptz not null default now();

-- Requests per key, hour, endpoint, network and status class, added to by each web process in
-- batches (an upsert adding its counts), so the sum over processes is exact. Days and months are
-- sums of hours. Rows older than the retention setting are deleted.
create table api_key_usage (
  api_key_id bigint not null references api_keys(id) on delete cascade,
  hour timestamptz not null,
  -- The endpoint's name as REST, tRPC and GraphQL share it (e.g. getUserOp, graphql).
  endpoint text not null,
  -- '' when the call named no network.
  network text not null default '',
  -- 2, 3, 4 or 5 (the status code's first digit).
  status_class smallint not null,
  requests bigint not null,
  primary key (api_key_id, hour, endpoint, network, status_class)
);
create index api_key_usage_hour on api_key_usage (hour);
