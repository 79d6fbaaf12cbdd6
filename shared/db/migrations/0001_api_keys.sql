-- API keys: only a SHA-256 hash of the key is stored; the plain key is shown once, at creation.
create table api_keys (
  id bigserial primary key,
  -- The visible start of the key (e.g. "ops_3Fh9x2Qa"), for listing and revoking.
  prefix text not null unique,
  key_hash text not null unique,
  name text not null,
  -- Per-key rate limit; null means the deployment's default.
  rate_limit_per_second integer,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
