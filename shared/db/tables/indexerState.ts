import type { Queryable } from '../client.js';

/** Reads of `indexer_state`: where the indexer stands on each network. */

export type IndexerState = {
  chainId: number;
  network: string;
  startBlock: number;
  indexedBlock: number;
  headBlock: number;
  backfillComplete: boolean;
  reorgEpoch: number;
};

type IndexerStateRow = {
  chain_id: string;
  network: string;
  start_block: string;
  indexed_block: string;
  head_block: string;
  backfill_complete: boolean;
  reorg_epoch: number;
};

const toIndexerState = (r: IndexerStateRow): IndexerState => ({
  chainId: Number(r.chain_id),
  network: r.network,
  startBlock: Number(r.start_block),
  indexedBlock: Number(r.indexed_block),
  headBlock: Number(r.head_block),
  backfillComplete: r.backfill_complete,
  reorgEpoch: r.reorg_epoch,
});

const COLUMNS = 'chain_id, network, start_block, indexed_block, head_block, backfill_complete, reorg_epoch';

export async function find(db: Queryable, chainId: number): Promise<IndexerState | null> {
  const { rows } = await db.query<IndexerStateRow>(`select ${COLUMNS} from indexer_state where chain_id = $1`, [chainId]);
  return rows[0] ? toIndexerState(rows[0]) : null;
}

export async function listByChainIds(db: Queryable, chainIds: number[]): Promise<IndexerState[]> {
  const { rows } = await db.query<IndexerStateRow>(
    `select ${COLUMNS} from indexer_state where chain_id = any($1::bigint[])`,
    [chainIds],
  );
  return rows.map(toIndexerState);
}
