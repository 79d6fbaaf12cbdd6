-- Two indexes every indexed op paid for and no query uses since the tables were partitioned by
-- chain id (0010): outbox_events_chain is the primary key (chain_id, id) again, and user_ops_hash
-- (user_op_hash) is served by the primary key (chain_id, user_op_hash) of each partition, a hash
-- looked up on several networks included (chain_id = any(...) is an index condition on it).
drop index if exists outbox_events_chain;
drop index if exists user_ops_hash;
