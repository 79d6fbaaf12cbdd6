-- Corrects the documentation of 0002 (applied files never change): NATIVE transfers have no log,
-- so their key is log_index = -1 - (the op's UserOperationEvent log index), batch_index = call index.
comment on column token_transfers.log_index is
  'Block-level log index of the Transfer log; for NATIVE transfers -1 minus the log index of the op''s UserOperationEvent';
comment on column token_transfers.batch_index is
  'Position inside an ERC-1155 TransferBatch; for NATIVE transfers the index of the decoded call';
