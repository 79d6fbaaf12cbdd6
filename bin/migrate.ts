import { baseEnvSchema, loadConfig } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/log.js';
import { beginStartUp } from '../shared/startUp.js';

// The Procfile's `release` step: applies pending migrations (idempotent).
const startUp = beginStartUp('migrate');
const config = loadConfig(baseEnvSchema, process.env);
const log = createLogger({ level: config.LOG_LEVEL, name: 'migrate' });
startUp.logEnvFile(log);
const db = await createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
try {
  const applied = await migrate(db);
  log.info({ applied, store: db.kind }, applied.length ? 'migrations applied' : 'database is up to date');
} finally {
  await db.close();
}
