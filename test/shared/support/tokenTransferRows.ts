import { bytea, type Queryable } from '../../../shared/db/client.js';
import { numeric } from '../../../shared/db/unnest.js';
import type { NewTokenTransfer } from '../../../shared/db/tables/tokenTransfers.js';

/** Token transfers of the tests of token_transfers' migrations. */
export const CHAIN = 31337;
export const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
export const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
export const TOKEN = address(0x70);
export const NFT = address(0x71);
export const OP_A = word(0xa);
export const OP_B = word(0xb);
export const TX_1 = word(0x1);
export const TX_2 = word(0x2);

/** An ERC-20 transfer of 1e18 from address 1 to address 2 by op A in transaction 1, block 5, but for `t`. */
export const transfer = (t: Partial<NewTokenTransfer>): NewTokenTransfer => ({
  txHash: TX_1,
  logIndex: 0,
  batchIndex: 0,
  blockNumber: 5,
  blockTime: 1_700_000_000,
  userOpHash: OP_A,
  standard: 'ERC20',
  token: TOKEN,
  from: address(1),
  to: address(2),
  value: 10n ** 18n,
  tokenId: null,
  ...t,
});

/**
 * Writes token_transfers rows in an earlier release's form, for the tests of databases written
 * by it: every row with its transaction hash (an op's transfer too), and an op's native value
 * transfers as NATIVE rows (today's indexer writes neither). `on conflict do nothing`, as the
 * indexer's repair writes.
 */
export async function insertTransferRowsBefore0036(db: Queryable, chainId: number, transfers: readonly NewTokenTransfer[]): Promise<void> {
  for (const n of transfers) {
    await db.query(
      `insert into token_transfers (chain_id, tx_hash, log_index, batch_index, block_number, block_time, user_op_hash, standard,
                                    token, from_address, to_address, value, token_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       on conflict do nothing`,
      [
        chainId,
        bytea(n.txHash),
        n.logIndex,
        n.batchIndex,
        n.blockNumber,
        n.blockTime,
        bytea(n.userOpHash),
        n.standard,
        bytea(n.token),
        bytea(n.from),
        bytea(n.to),
        numeric(n.value),
        numeric(n.tokenId),
      ],
    );
  }
}
