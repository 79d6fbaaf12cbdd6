-- What real chains show beyond the devnet (research/indexer.md §1.4, §1.6).

-- EIP-7702: the op's sender is an EOA running delegated account code. Set when the bundle
-- transaction's authorization list delegates the sender, the op's initCode is the 0x7702 marker
-- (v0.8+), or a v0.9 EIP7702AccountInitialized names the op. An account keeps the flag once seen.
alter table user_ops add column eip7702 boolean not null default false;
alter table accounts add column eip7702 boolean not null default false;

-- v0.9: the paymaster's signature appended to paymasterAndData (‖ uint16 length ‖ magic
-- 0x22e325a297439656); not part of the paymaster's data and not covered by the userOpHash.
-- paymaster_and_data keeps the bytes as sent.
alter table user_ops add column paymaster_signature text;

-- OP-stack L1 data fee of the bundle transaction (receipt `l1Fee`), null where the chain reports
-- none. `fee` already includes it: it is what the bundler paid.
alter table bundle_transactions add column l1_fee numeric(78,0);
