/**
 * An indexer in its own process, for the crash test: `tsx indexerProcess.ts DB_URL RPC_URL RANGE`
 * indexes the devnet into DB_URL with eth_getLogs ranges of RANGE blocks (many small batches, so
 * a SIGKILL lands at random points of the backfill; the known-address filter stored after every
 * pass), prints "ready", and runs until killed.
 */
import { createDb } from '../../shared/db/client.js';
import { startIndexer } from '../../indexer/index.js';
import { devnetConfig, quietLogger } from './support.js';

const [databaseUrl, rpcUrl, range] = process.argv.slice(2);
if (!databaseUrl || !rpcUrl || !range) throw new Error('usage: indexerProcess.ts DB_URL RPC_URL RANGE');
const db = await createDb({ databaseUrl, max: 3 });
startIndexer({
  db,
  config: devnetConfig(rpcUrl),
  log: quietLogger(),
  // The known-address filter stored after every pass: each restart reads it (and the addresses above it).
  tuning: { initialLogRange: Number(range), maxLogRange: Number(range), prefetchRanges: 2, knownFilterSaveAddresses: 1 },
});
process.stdout.write('ready\n');
