-- Outbox events the webhook dispatcher could not process (a payload that does not fit the contract
-- in shared/outboxEvents.ts, an unknown type): set aside with the reason, so one bad row neither
-- stops the chain's other events nor is lost. The matcher writes them in the transaction that moves
-- its cursor past them. See shared/db/tables/outboxDeadLetters.ts.
create table outbox_dead_letters (
  outbox_event_id bigint primary key,       -- outbox_events.id
  chain_id bigint not null,
  type text not null,
  payload jsonb not null,                   -- as the indexer wrote it
  reason text not null,
  created_at timestamptz not null default now()
);
create index outbox_dead_letters_chain on outbox_dead_letters (chain_id, outbox_event_id);
