import { bytea, type Queryable } from '../../../shared/db/client.js';
import type { NewTokenTransfer } from '../../../shared/db/tables/tokenTransfers.js';

/**
 * Writes an op's native value transfers as token_transfers rows, as the indexer did before migration
 * 0035 (tokenTransfers no longer writes them): for the tests of databases written before it.
 */
export async function insertNativeTransferRows(db: Queryable, chainId: number, transfers: readonly NewTokenTransfer[]): Promise<void> {
  for (const n of transfers) {
    await db.query(
      `insert into token_transfers (chain_id, tx_hash, log_index, batch_index, block_number, block_time, user_op_hash, standard,
                                    from_address, to_address, value)
       values ($1, $2, $3, $4, $5, $6, $7, 'NATIVE', $8, $9, $10)`,
      [
        chainId,
        bytea(n.txHash),
        n.logIndex,
        n.batchIndex,
        n.blockNumber,
        n.blockTime,
        bytea(n.userOpHash!),
        bytea(n.from),
        bytea(n.to),
        n.value.toString(),
      ],
    );
  }
}
