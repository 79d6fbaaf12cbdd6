import { generateApiKey, importApiKey, PREFIX_LENGTH } from '../../shared/apiKeys.js';
import type { Db } from '../../shared/db/client.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import { CommandError, parse, UsageError } from './args.js';

export const KEYS_USAGE = `usage: opscan keys create NAME [--rate-limit N]               create a key (printed once, alone on the last line)
       opscan keys import NAME --key VALUE [--rate-limit N]   store a key issued by a previous deployment (e.g. JiffyScan)
       opscan keys list                                       list keys (prefixes only: keys are stored hashed)
       opscan keys revoke PREFIX                              revoke the key with this prefix (see list)`;

/** --rate-limit N (requests per second), or null for the default. */
function rateLimit(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const rate = Number(raw);
  if (!(Number.isInteger(rate) && rate > 0)) throw new UsageError('--rate-limit must be a positive integer (requests per second)');
  return rate;
}

export async function keysCommand(db: Db, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const { values, positionals } = parse(rest, { 'rate-limit': { type: 'string' }, key: { type: 'string' } });
  switch (command) {
    case 'create': {
      const name = positionals[0];
      if (!name) throw new UsageError('keys create needs a NAME');
      const { key, prefix, hash } = generateApiKey();
      const created = await apiKeys.insert(db, { prefix, hash, name, rateLimitPerSecond: rateLimit(values['rate-limit']) });
      console.log(`Created API key "${created.name}" (prefix ${created.prefix}). It is shown only now:`);
      console.log(key);
      return;
    }
    case 'import': {
      const name = positionals[0];
      const key = values.key;
      if (!name || !key) throw new UsageError('keys import needs a NAME and --key VALUE');
      let parsed;
      try {
        parsed = importApiKey(key);
      } catch (err) {
        throw new CommandError((err as Error).message);
      }
      const clash = await apiKeys.findClash(db, parsed);
      if (clash)
        throw new CommandError(
          `This key is already stored, or another key starts with ${parsed.prefix} ("${clash.name}"): nothing imported.`,
        );
      const imported = await apiKeys.insert(db, { ...parsed, name, rateLimitPerSecond: rateLimit(values['rate-limit']) });
      console.log(`Imported API key "${imported.name}" (prefix ${imported.prefix}); clients sending it are accepted.`);
      return;
    }
    case 'list': {
      const keys = await apiKeys.list(db);
      if (keys.length === 0) console.log('No API keys yet: opscan keys create NAME');
      for (const k of keys) {
        const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active';
        console.log(`${k.prefix}  ${k.name}  created ${k.createdAt.toISOString()}  ${state}`);
      }
      return;
    }
    case 'revoke': {
      const prefix = positionals[0];
      if (!prefix || prefix.length !== PREFIX_LENGTH)
        throw new UsageError(`keys revoke needs a PREFIX of ${PREFIX_LENGTH} characters (see opscan keys list)`);
      const revoked = await apiKeys.revokeByPrefix(db, prefix);
      if (!revoked) throw new CommandError(`No active key with prefix ${prefix} (see opscan keys list)`);
      console.log(`Revoked ${revoked.prefix} (${revoked.name})`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown keys command "${command}"` : 'keys needs a command');
  }
}
