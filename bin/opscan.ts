/**
 * The operator CLI: `npx opscan <command>` (package.json `bin`, bin/opscan.mjs) or
 * `npm run opscan -- <command>`. Each command opens the database of the environment (the same
 * variables as the processes), does one thing, and says what to do when it cannot.
 */
import { indexerEnvSchema, loadConfig } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { assertMigrated, migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/log.js';
import { loadEnvFile, oneLineReason } from '../shared/startUp.js';
import { CommandError, UsageError } from './cli/args.js';
import { BACKFILL_USAGE, backfillCommand } from './cli/backfill.js';
import { KEYS_USAGE, keysCommand } from './cli/keys.js';
import { PLANS_USAGE, plansCommand } from './cli/plans.js';
import { STATUS_USAGE, statusCommand } from './cli/status.js';
import { USAGE_USAGE, usageCommand } from './cli/usage.js';
import { WEBHOOKS_USAGE, webhooksCommand } from './cli/webhooks.js';

const MIGRATE_USAGE = `usage: opscan migrate
  Applies pending migrations (idempotent; the Procfile's release phase runs the same).`;

const USAGE = `usage: opscan <command> [--help]

  keys create|import|list|show|update|rotate|revoke   API keys
  plans create|list|update|delete  API plans (rates, quotas, networks) keys are sold on
  usage [--key K] [--days N] [--by day|hour|endpoint|key]   requests counted per key
  status                           per network: head, indexed block, lag, backfill; webhook deliveries
  backfill --network N --from B    re-index a range (stop the network's indexer first)
  webhooks list|disable|enable|replay
  migrate                          apply pending migrations

The database is the environment's (DATABASE_URL, else PGlite in DATA_DIR; with PGlite, stop
npm start first: one process at a time). See docs/operations.md.`;

const COMMANDS: Record<string, string> = {
  keys: KEYS_USAGE,
  plans: PLANS_USAGE,
  usage: USAGE_USAGE,
  status: STATUS_USAGE,
  backfill: BACKFILL_USAGE,
  webhooks: WEBHOOKS_USAGE,
  migrate: MIGRATE_USAGE,
};

async function run(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const usage = COMMANDS[command];
  if (!usage) {
    console.error(`opscan: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    return 0;
  }
  const config = loadConfig(indexerEnvSchema, process.env);
  const log = createLogger({ level: config.LOG_LEVEL, name: 'opscan', format: config.LOG_FORMAT });
  const db = await createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    if (command === 'migrate') {
      const applied = await migrate(db);
      console.log(applied.length ? `Applied ${applied.join(', ')}` : 'The database is up to date.');
      return 0;
    }
    // Creating a key on a fresh embedded store is the first thing a newcomer does: migrate first.
    if ((command === 'keys' || command === 'plans') && db.kind === 'pglite') await migrate(db);
    else await assertMigrated(db);
    switch (command) {
      case 'keys':
        await keysCommand(db, args);
        break;
      case 'plans':
        await plansCommand(db, args);
        break;
      case 'usage':
        await usageCommand(db, args);
        break;
      case 'status':
        await statusCommand(db, config, args);
        break;
      case 'backfill':
        await backfillCommand(db, config, log, args);
        break;
      case 'webhooks':
        await webhooksCommand(db, args);
        break;
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`opscan ${command}: ${err.message}\n\n${usage}`);
      return 2;
    }
    if (err instanceof CommandError) {
      console.error(`opscan ${command}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await db.close();
  }
}

try {
  // The processes' `.env` (the environment wins); not logged here, as commands print what scripts read.
  loadEnvFile();
  process.exitCode = await run(process.argv.slice(2));
} catch (err) {
  // A bad environment, a database that is behind the code or unreachable: the message says what to do.
  console.error(`opscan: ${oneLineReason(err)}`);
  process.exitCode = 1;
}
