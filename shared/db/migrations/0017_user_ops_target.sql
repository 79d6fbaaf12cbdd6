-- An op's target (the first call its account makes, the subgraph's `target`) was read from
-- user_op_calls, whose (chain_id, target) index is not in time order: a page of a busy contract's
-- ops (the address activity of a token or a dapp) read every op that ever called it, then sorted
-- them (3.5 s for a target of 176,000 ops), and PostgreSQL planned that branch on every call because
-- its generic estimate was a target's average. Kept on the op, beside the sender, it is read like
-- the sender: newest first along its own index, stopping after a page.
alter table user_ops add column target text;

-- A deployment indexed before this column existed.
update user_ops u
set target = c.target
from user_op_calls c
where c.chain_id = u.chain_id and c.user_op_hash = u.user_op_hash and c.call_index = 0;

create index user_ops_target on user_ops (chain_id, target, block_number desc, log_index desc) where target is not null;
