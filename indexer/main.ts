/**
 * `npm run indexer` (Procfile `indexer:`): reads the environment, opens the database (refusing
 * one that is not migrated), and indexes until SIGINT/SIGTERM. On PostgreSQL it joins the other
 * indexer processes of the database and runs its share of the networks, each in a supervised
 * worker thread; on the embedded PGlite store (one store, one thread) it runs every network here.
 */
import { indexerEnvSchema, loadConfig } from '../shared/config.js';
import { waitForDatabase } from '../shared/db/availability.js';
import { configuredStore, createDb } from '../shared/db/client.js';
import { assertMigrated } from '../shared/db/migrate.js';
import { createShutdown } from '../shared/lifecycle.js';
import { createLogger } from '../shared/log.js';
import { closeServer, startOpsServer } from '../shared/opsServer.js';
import { beginStartUp } from '../shared/startUp.js';
import { startSharedIndexer } from './sharedIndexer.js';
import { indexerMetrics } from './metrics.js';

const startUp = beginStartUp('indexer');
const config = loadConfig(indexerEnvSchema, process.env);
const log = createLogger({ level: config.LOG_LEVEL, name: 'indexer', format: config.LOG_FORMAT });
startUp.logEnvFile(log);
const shutdown = createShutdown(log);

// On PostgreSQL this pool serves /metrics and /readyz (the heartbeat and each network's worker have
// their own); on PGlite it is the one store every network writes through.
const db = await createDb({ ...configuredStore(config), max: 4, log });
shutdown.add('database', () => db.close());
indexerMetrics.watch(db, config.networks);
// Served before the database is waited for: /readyz says 503 (and why) meanwhile.
if (config.METRICS_PORT !== undefined) {
  const ops = await startOpsServer({ port: config.METRICS_PORT, db, metricsToken: config.METRICS_TOKEN, log });
  shutdown.add('metrics server', () => closeServer(ops));
}
await waitForDatabase(db, { timeoutMs: config.DB_STARTUP_TIMEOUT_MS, log });
await assertMigrated(db);

// On PGlite every network runs on this thread, so only then does it load the indexing code.
const indexer = config.DATABASE_URL
  ? await startSharedIndexer({ databaseUrl: config.DATABASE_URL, config, log })
  : (await import('./index.js')).startIndexer({ db, config, log });
shutdown.add('indexer', () => indexer.stop());
log.info({ networks: config.networks.map((n) => n.name) }, 'indexer started');
startUp.done();
