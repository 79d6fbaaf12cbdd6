import type { IndexerConfig } from '../../shared/config.js';
import type { Db } from '../../shared/db/client.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import type { Logger } from '../../shared/log.js';
import { findNetwork } from '../../shared/networks.js';
import { indexNetworkUpTo, rollbackTo, runSettingsOf, takeWriterLock } from '../../indexer/index.js';
import { CommandError, parse, UsageError } from './args.js';

export const BACKFILL_USAGE = `usage: opscan backfill --network NAME --from BLOCK [--to BLOCK] [--wait]
  Re-indexes a range: removes what is indexed from BLOCK on (as a reorg would: aggregates recomputed,
  removals announced to webhooks) and indexes it again up to --to (default: the chain head). The
  indexer then continues from there. It takes the network's writer lock, so it never runs beside an
  indexer of that network: stop the indexer first, or --wait for its lock.`;

const LOCK_RETRY_MS = 1000;

function block(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new UsageError(`${flag} must be a block number`);
  return Number(raw);
}

export async function backfillCommand(
  db: Db,
  config: Pick<IndexerConfig, 'networks' | 'INDEXER_TRACES' | 'INDEXER_TRANSFERS' | 'INDEXER_TRANSFER_LOOKBACK_BLOCKS'>,
  log: Logger,
  args: string[],
): Promise<void> {
  const { values } = parse(args, {
    network: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    wait: { type: 'boolean' },
  });
  const from = block(values.from, '--from');
  const to = block(values.to, '--to');
  if (!values.network || from === undefined) throw new UsageError('backfill needs --network NAME and --from BLOCK');
  if (to !== undefined && to < from) throw new UsageError('--to must not be below --from');
  const listed = findNetwork(values.network);
  const network = listed && config.networks.find((n) => n.chainId === listed.chainId);
  if (!network)
    throw new CommandError(
      `${values.network} is not a configured network (NETWORKS lists ${config.networks.map((n) => n.name).join(', ')})`,
    );
  if (network.rpcUrls.length === 0)
    throw new CommandError(`No RPC URL for ${network.name}: set RPC_URL_${network.name.toUpperCase().replaceAll('-', '_')}`);

  await db.withSession(async (session) => {
    await takeWriterLock(db, session, network.chainId, {
      retryMs: LOCK_RETRY_MS,
      onHeld: () => {
        if (values.wait) return;
        throw new CommandError(
          `An indexer of ${network.name} is running (it holds the network's writer lock). Stop it (on a platform: scale the indexer to 0), ` +
            'run the backfill, then start it again; or add --wait to take the lock as soon as it is free.',
        );
      },
    });
    const state = await indexerState.find(db, network.chainId);
    if (!state)
      throw new CommandError(`${network.name} has not been indexed yet: start the indexer once (it creates the network's cursor).`);
    if (from < state.startBlock)
      throw new CommandError(
        `--from ${from} is below the first indexed block of ${network.name} (${state.startBlock}; START_BLOCK_* sets it)`,
      );
    if (from > state.indexedBlock + 1) {
      throw new CommandError(
        `Nothing indexed at ${from} yet (${network.name} is indexed up to ${state.indexedBlock}): the indexer will get there by itself.`,
      );
    }
    const removed = await rollbackTo(db, network.chainId, { number: from - 1, hash: '' });
    log.info(
      { network: network.name, fromBlock: from, toBlock: to ?? 'head', removedUserOps: removed.removedUserOps },
      'backfill: range removed; indexing it again',
    );
    await indexNetworkUpTo({ db, log, network, settings: runSettingsOf(config), untilBlock: to });
    const after = await indexerState.find(db, network.chainId);
    console.log(
      `Backfilled ${network.name} blocks ${from}–${after?.indexedBlock ?? '?'} (${removed.removedUserOps} user ops removed and indexed again).`,
    );
  });
}
