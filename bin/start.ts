import { loadConfig, webEnvSchema } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import { createShutdown } from '../shared/lifecycle.js';
import { createLogger } from '../shared/log.js';
import { closeServer, startWeb } from '../server/web.js';

/**
 * `npm start`: the whole product in one process on the embedded defaults — migrations, then the
 * web process. With PGlite only one process may open the store, so the processes of the
 * Procfile share this one.
 */
const config = loadConfig(webEnvSchema, process.env);
const log = createLogger({ level: config.LOG_LEVEL, name: 'opscan' });
const shutdown = createShutdown(log);
const db = await createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
shutdown.add('db', () => db.close());
await migrate(db);

const server = await startWeb({ db, config, log }, config.PORT);
shutdown.add('web', () => closeServer(server));
log.info({ url: `http://127.0.0.1:${config.PORT}`, store: db.kind }, 'opscan is running');
