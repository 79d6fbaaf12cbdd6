import { generateApiKey, PREFIX_LENGTH } from '../shared/apiKeys.js';
import { baseEnvSchema, loadConfig } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';

const USAGE = `usage: npm run keys -- create NAME [--rate-limit N]   create a key (printed once, alone on the last line)
       npm run keys -- list                              list keys (prefixes only)
       npm run keys -- revoke PREFIX                     revoke the key with this prefix`;

const [command, ...args] = process.argv.slice(2);
const config = loadConfig(baseEnvSchema, process.env);
const db = await createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
// Creating a key on a fresh embedded store is the first thing a newcomer does: migrate first.
await migrate(db);

try {
  switch (command) {
    case 'create': {
      const name = args.find((a) => !a.startsWith('--'));
      const rateIndex = args.indexOf('--rate-limit');
      const rate = rateIndex >= 0 ? Number(args[rateIndex + 1]) : null;
      if (!name || (rate !== null && !(Number.isInteger(rate) && rate > 0))) throw new Error(USAGE);
      const { key, prefix, hash } = generateApiKey();
      const created = await apiKeys.insert(db, { prefix, hash, name, rateLimitPerSecond: rate });
      console.log(`Created API key "${created.name}" (prefix ${created.prefix}). It is shown only now:`);
      console.log(key);
      break;
    }
    case 'list': {
      for (const k of await apiKeys.list(db)) {
        const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active';
        console.log(`${k.prefix}  ${k.name}  created ${k.createdAt.toISOString()}  ${state}`);
      }
      break;
    }
    case 'revoke': {
      const prefix = args[0];
      if (!prefix || prefix.length !== PREFIX_LENGTH) throw new Error(USAGE);
      const revoked = await apiKeys.revokeByPrefix(db, prefix);
      if (!revoked) throw new Error(`No active key with prefix ${prefix}`);
      console.log(`Revoked ${revoked.prefix} (${revoked.name})`);
      break;
    }
    default:
      throw new Error(USAGE);
  }
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
} finally {
  await db.close();
}
