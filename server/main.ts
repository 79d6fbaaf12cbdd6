import { loadConfig, webEnvSchema } from '../shared/config.js';
import { waitForDatabase } from '../shared/db/availability.js';
import { createDb } from '../shared/db/client.js';
import { assertMigrated } from '../shared/db/migrate.js';
import { createShutdown } from '../shared/lifecycle.js';
import { createLogger } from '../shared/log.js';
import { beginStartUp } from '../shared/startUp.js';
import { webStatementTimeoutMs } from './services.js';
import { closeServer, startWeb } from './web.js';

// The `web` process of the Procfile: REST /v0 and tRPC /trpc on one port.
const startUp = beginStartUp('web');
const config = loadConfig(webEnvSchema, process.env);
const log = createLogger({ level: config.LOG_LEVEL, name: 'web' });
startUp.logEnvFile(log);
const shutdown = createShutdown(log);
const db = await createDb({
  databaseUrl: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  statementTimeoutMs: webStatementTimeoutMs(config),
  // A request waits no longer for a connection (or a free one of the pool) than for a statement:
  // past that it is answered 503 rather than held open.
  connectTimeoutMs: webStatementTimeoutMs(config),
  log,
});
shutdown.add('db', () => db.close());
await waitForDatabase(db, { timeoutMs: config.DB_STARTUP_TIMEOUT_MS, log });
await assertMigrated(db);
const server = await startWeb({ db, config, log }, config.PORT);
shutdown.add('http', () => closeServer(server));
startUp.done();
