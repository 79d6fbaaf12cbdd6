import { dispatcherEnvSchema, loadConfig } from '../shared/config.js';
import { waitForDatabase } from '../shared/db/availability.js';
import { configuredStore, createDb } from '../shared/db/client.js';
import { assertMigrated } from '../shared/db/migrate.js';
import { createShutdown } from '../shared/lifecycle.js';
import { createLogger } from '../shared/log.js';
import { closeServer, startOpsServer } from '../shared/opsServer.js';
import { beginStartUp } from '../shared/startUp.js';
import { dispatcherMetrics } from './metrics.js';
import { startDispatcher } from './startDispatcher.js';

// The `dispatcher` process of the Procfile: outbox events → signed webhook deliveries.
// Any number may run at once: they share the outbox cursor and the delivery queue through Postgres.
const startUp = beginStartUp('dispatcher');
const config = loadConfig(dispatcherEnvSchema, process.env);
const log = createLogger({ level: config.LOG_LEVEL, name: 'dispatcher', format: config.LOG_FORMAT });
startUp.logEnvFile(log);
const shutdown = createShutdown(log);
// Room for the two LISTEN sessions, the matcher, claims and batched outcome writes.
const db = await createDb({ ...configuredStore(config), max: 20, log });
shutdown.add('db', () => db.close());
dispatcherMetrics.watch(db);
// Served before the database is waited for: /readyz says 503 (and why) meanwhile.
if (config.METRICS_PORT !== undefined) {
  const ops = await startOpsServer({ port: config.METRICS_PORT, db, metricsToken: config.METRICS_TOKEN, log });
  shutdown.add('metrics server', () => closeServer(ops));
}
await waitForDatabase(db, { timeoutMs: config.DB_STARTUP_TIMEOUT_MS, log });
await assertMigrated(db);
const dispatcher = await startDispatcher({ db, config, log });
shutdown.add('dispatcher', () => dispatcher.stop());
startUp.done();
