import { generateApiKey, importApiKey, PREFIX_LENGTH } from '../shared/apiKeys.js';
import { baseEnvSchema, loadConfig } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';

const USAGE = `usage: npm run keys -- create NAME [--rate-limit N]              create a key (printed once, alone on the last line)
       npm run keys -- import NAME --key VALUE [--rate-limit N]  store a key issued by a previous deployment (e.g. JiffyScan)
       npm run keys -- list                                         list keys (prefixes only)
       npm run keys -- revoke PREFIX                                revoke the key with this prefix`;

const [command, ...args] = process.argv.slice(2);

/** The value after `--flag`, or null when the flag is absent. */
function option(flag: string): string | null {
  const at = args.indexOf(flag);
  return at >= 0 ? (args[at + 1] ?? '') : null;
}

/** NAME: the first argument that is neither a flag nor a flag's value. */
const nameArg = () => args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));

/** --rate-limit N (requests per second), or null for the default. */
function rateLimitArg(): number | null {
  const raw = option('--rate-limit');
  if (raw === null) return null;
  const rate = Number(raw);
  if (!(Number.isInteger(rate) && rate > 0)) throw new Error(`--rate-limit must be a positive integer\n${USAGE}`);
  return rate;
}
const config = loadConfig(baseEnvSchema, process.env);
const db = await createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
// Creating a key on a fresh embedded store is the first thing a newcomer does: migrate first.
await migrate(db);

try {
  switch (command) {
    case 'create': {
      const name = nameArg();
      if (!name) throw new Error(USAGE);
      const { key, prefix, hash } = generateApiKey();
      const created = await apiKeys.insert(db, { prefix, hash, name, rateLimitPerSecond: rateLimitArg() });
      console.log(`Created API key "${created.name}" (prefix ${created.prefix}). It is shown only now:`);
      console.log(key);
      break;
    }
    case 'import': {
      const name = nameArg();
      const key = option('--key');
      if (!name || !key) throw new Error(USAGE);
      const { prefix, hash } = importApiKey(key);
      const clash = await apiKeys.findClash(db, { prefix, hash });
      if (clash) throw new Error(`This key is already stored, or another key starts with ${prefix} ("${clash.name}"): nothing imported.`);
      const imported = await apiKeys.insert(db, { prefix, hash, name, rateLimitPerSecond: rateLimitArg() });
      console.log(`Imported API key "${imported.name}" (prefix ${imported.prefix}); clients sending it are accepted.`);
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
