-- What the ERC-4337 RPC (/rpc/<network>) answers of a bundle transaction's receipt beyond the
-- columns already kept: cumulative_gas_used and tx_type (the receipt's `type`), and receipt_rest,
-- the receipt's fields that no column or the packed logs give back (a chain's own fields such as an
-- OP-stack chain's l1GasUsed, or a node's blobGasPrice and blockTimestamp), as the node sent them.
-- logsBloom is not stored: it is a function of the logs, computed when answered. Rows indexed before
-- these columns existed keep nulls (answered without the fields until their range is indexed again).
alter table bundle_transactions
  add column cumulative_gas_used numeric,
  add column tx_type smallint,
  add column receipt_rest jsonb;

-- The RPC is its own scope, so that an operator can allow or deny it per key; every key that may
-- read the data API may call it until its scopes are changed.
alter table api_keys alter column scopes set default '{read,webhooks,rpc}';
update api_keys set scopes = array_append(scopes, 'rpc') where 'read' = any(scopes) and not 'rpc' = any(scopes);

-- lz4, as every compressible column of the indexed tables.
select opscan_columns_lz4('bundle_transactions', array['cumulative_gas_used', 'receipt_rest']);
