import { storableText } from '../../chainText.js';
import { bytea, type Queryable } from '../client.js';

/** Reads of `indexer_state`: where the indexer stands on each network. */

/** The batch the indexer fails to write, attempt after attempt, until one commits. */
export type WriteFailure = {
  fromBlock: number;
  toBlock: number;
  /** The last attempt's error. */
  reason: string;
  /** Attempts that failed at fromBlock in a row. */
  attempts: number;
  /** ISO time of the first of them. */
  since: string;
};

export type IndexerState = {
  chainId: number;
  network: string;
  startBlock: number;
  indexedBlock: number;
  headBlock: number;
  backfillComplete: boolean;
  reorgEpoch: number;
  /** Reorgs that removed blocks past the finality depth: answers cached as final hold only under the same count. */
  finalEpoch: number;
  writeFailure: WriteFailure | null;
};

type IndexerStateRow = {
  chain_id: string;
  network: string;
  start_block: string;
  indexed_block: string;
  head_block: string;
  backfill_complete: boolean;
  reorg_epoch: number;
  final_epoch: number;
  write_failure: WriteFailure | null;
};

const toIndexerState = (r: IndexerStateRow): IndexerState => ({
  chainId: Number(r.chain_id),
  network: r.network,
  startBlock: Number(r.start_block),
  indexedBlock: Number(r.indexed_block),
  headBlock: Number(r.head_block),
  backfillComplete: r.backfill_complete,
  reorgEpoch: r.reorg_epoch,
  finalEpoch: r.final_epoch,
  writeFailure: r.write_failure,
});

const COLUMNS = 'chain_id, network, start_block, indexed_block, head_block, backfill_complete, reorg_epoch, final_epoch, write_failure';

export async function find(db: Queryable, chainId: number): Promise<IndexerState | null> {
  const { rows } = await db.query<IndexerStateRow>(`select ${COLUMNS} from indexer_state where chain_id = $1`, [chainId]);
  return rows[0] ? toIndexerState(rows[0]) : null;
}

export async function listByChainIds(db: Queryable, chainIds: number[]): Promise<IndexerState[]> {
  const { rows } = await db.query<IndexerStateRow>(`select ${COLUMNS} from indexer_state where chain_id = any($1::bigint[])`, [chainIds]);
  return rows.map(toIndexerState);
}

/** The last indexed block's header (the subgraph's `_meta.block`); null before the first batch. */
export async function findIndexedHead(
  db: Queryable,
  chainId: number,
): Promise<{ number: number; hash: string | null; parentHash: string | null; timestamp: number | null } | null> {
  const { rows } = await db.query<{ number: string; hash: string | null; parent_hash: string | null; timestamp: string | null }>(
    `select s.indexed_block as number, coalesce(s.indexed_block_hash, b.hash) as hash, b.parent_hash, b.timestamp
     from indexer_state s left join blocks b on b.chain_id = s.chain_id and b.number = s.indexed_block
     where s.chain_id = $1 and s.indexed_block >= s.start_block`,
    [chainId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    number: Number(r.number),
    hash: r.hash,
    parentHash: r.parent_hash,
    timestamp: r.timestamp === null ? null : Number(r.timestamp),
  };
}

// Writes (the indexer): its cursor, moved in the same transaction as the rows of each batch.

/**
 * NOTIFY channel of cursor moves (payload: the chain id), sent by the statement that moves the
 * cursor, so it is delivered when the batch (or rollback) commits: the web process reads
 * indexer_state again at once instead of on its timer (server/indexerView.ts), and its cache stops
 * serving answers computed at the previous head.
 */
export const INDEXED_CHANNEL = 'opscan_indexed';

export type Cursor = { indexedBlock: number; indexedBlockHash: string | null; backfillComplete: boolean; reorgEpoch: number };

/** Creates the network's row on first start (nothing indexed yet: the cursor sits before startBlock). */
export async function insertIfMissing(db: Queryable, state: { chainId: number; network: string; startBlock: number }): Promise<void> {
  await db.query(
    `insert into indexer_state (chain_id, network, start_block, indexed_block) values ($1, $2, $3::bigint, $3::bigint - 1)
     on conflict (chain_id) do nothing`,
    [state.chainId, state.network, state.startBlock],
  );
}

/** The cursor, locked until the end of the caller's transaction (`forUpdate`) so two writers cannot both advance it. */
export async function findCursor(db: Queryable, chainId: number, forUpdate = false): Promise<Cursor | null> {
  const { rows } = await db.query<{
    indexed_block: string;
    indexed_block_hash: string | null;
    backfill_complete: boolean;
    reorg_epoch: number;
  }>(
    `select indexed_block, indexed_block_hash, backfill_complete, reorg_epoch from indexer_state where chain_id = $1${forUpdate ? ' for update' : ''}`,
    [chainId],
  );
  const r = rows[0];
  return r
    ? {
        indexedBlock: Number(r.indexed_block),
        indexedBlockHash: r.indexed_block_hash,
        backfillComplete: r.backfill_complete,
        reorgEpoch: r.reorg_epoch,
      }
    : null;
}

export async function updateCursor(
  db: Queryable,
  cursor: { chainId: number; indexedBlock: number; indexedBlockHash: string; headBlock: number; backfillComplete: boolean },
): Promise<void> {
  await db.query(
    `with moved as (
       update indexer_state set indexed_block = $2, indexed_block_hash = $3, head_block = greatest(head_block, $4, $2),
         backfill_complete = backfill_complete or $5, updated_at = now(),
         write_failure = case when (write_failure->>'fromBlock')::bigint > $2 then write_failure end
       where chain_id = $1 returning chain_id)
     select pg_notify($6, chain_id::text) from moved`,
    [cursor.chainId, cursor.indexedBlock, bytea(cursor.indexedBlockHash), cursor.headBlock, cursor.backfillComplete, INDEXED_CHANNEL],
  );
}

/**
 * Notes that the batch `fromBlock`..`toBlock` failed to commit: a failure at the same fromBlock
 * as the last one counts one more attempt, since the first. Nothing is noted once the cursor has
 * passed fromBlock (a later attempt committed first).
 */
export async function recordWriteFailure(
  db: Queryable,
  chainId: number,
  failure: { fromBlock: number; toBlock: number; reason: string },
): Promise<void> {
  await db.query(
    `update indexer_state set write_failure = jsonb_build_object(
       'fromBlock', $2::bigint, 'toBlock', $3::bigint, 'reason', $4::text,
       'attempts', case when (write_failure->>'fromBlock')::bigint = $2 then (write_failure->>'attempts')::int + 1 else 1 end,
       'since', case when (write_failure->>'fromBlock')::bigint = $2 then write_failure->>'since'
                     else to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end)
     where chain_id = $1 and indexed_block < $2`,
    [chainId, failure.fromBlock, failure.toBlock, storableText(failure.reason)],
  );
}

export async function updateHead(db: Queryable, chainId: number, headBlock: number): Promise<void> {
  await db.query(`update indexer_state set head_block = $2, updated_at = now() where chain_id = $1`, [chainId, headBlock]);
}

/**
 * Moves the cursor back to a reorg's common ancestor and bumps reorg_epoch (cache keys of unfinalised
 * data include it), and final_epoch too when the reorg removed blocks held final.
 */
export async function rewind(
  db: Queryable,
  chainId: number,
  block: { number: number; hash: string | null },
  beyondFinality = false,
): Promise<void> {
  await db.query(
    `with moved as (
       update indexer_state set indexed_block = $2, indexed_block_hash = $3, reorg_epoch = reorg_epoch + 1,
              final_epoch = final_epoch + $5::int, updated_at = now()
       where chain_id = $1 returning chain_id)
     select pg_notify($4, chain_id::text) from moved`,
    [chainId, block.number, bytea(block.hash), INDEXED_CHANNEL, beyondFinality ? 1 : 0],
  );
}
