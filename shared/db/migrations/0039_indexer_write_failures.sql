-- Why the indexer cannot write a network's next batch, while it cannot: { fromBlock, toBlock,
-- reason, attempts, since } (indexer_state.ts recordWriteFailure). Null while batches commit: the
-- statement that moves the cursor past fromBlock clears it.
alter table indexer_state add column write_failure jsonb;
