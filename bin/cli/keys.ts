import type { z } from 'zod';
import * as ops from '../../server/admin/operations/index.js';
import type { Db } from '../../shared/db/client.js';
import { listOrNull, parse, performCommand, UsageError, valueOrNull } from './args.js';

export const KEYS_USAGE = `usage: opscan keys create NAME [SETTINGS]                 create a key (printed once, alone on the last line)
       opscan keys import NAME --key VALUE [SETTINGS]     store a key issued by a previous deployment (e.g. JiffyScan)
       opscan keys list [--json]                          list keys (prefixes only: keys are stored hashed)
       opscan keys show KEY [--json]                      one key (KEY: its id or its prefix, see list)
       opscan keys update KEY [--name NAME] [SETTINGS]    change a key (its holder keeps the same key)
       opscan keys rotate KEY [--grace-hours N]           issue a replacement (printed once, alone on the last line);
                                                          the old key works N hours more (default ${ops.DEFAULT_GRACE_HOURS})
       opscan keys revoke KEY                             revoke a key at once
SETTINGS: --plan PLAN|none  --scopes read,webhooks,admin,rpc  --networks NAME,NAME|all
          --expires DATE|never (ISO 8601)  --rate-limit N|default (requests per second without a plan)`;

const SETTINGS = {
  plan: { type: 'string' },
  scopes: { type: 'string' },
  networks: { type: 'string' },
  expires: { type: 'string' },
  'rate-limit': { type: 'string' },
} as const;

type KeyOut = z.input<typeof ops.getKey.output>;

/** The settings flags as operation fields (absent flags stay absent). */
function settingsOf(values: { [K in keyof typeof SETTINGS]?: string }) {
  return {
    plan: valueOrNull(values.plan, 'none'),
    scopes: listOrNull(values.scopes, ''),
    networks: listOrNull(values.networks, 'all'),
    expiresAt: valueOrNull(values.expires, 'never'),
    rateLimitPerSecond: valueOrNull(values['rate-limit'], 'default'),
  };
}

function describe(k: KeyOut): string {
  const state = k.revokedAt ? `revoked ${k.revokedAt}` : !k.active ? `expired ${k.expiresAt}` : 'active';
  const details = [
    k.plan ? `plan ${k.plan.name}` : k.rateLimitPerSecond ? `${k.rateLimitPerSecond}/s` : null,
    `scopes ${k.scopes.join(',')}`,
    k.networks ? `networks ${k.networks.join(',')}` : null,
    k.active && k.expiresAt ? `expires ${k.expiresAt}` : null,
    k.replacedBy ? `replaced by #${k.replacedBy}` : null,
    k.lastUsedAt ? `last used ${k.lastUsedAt}` : null,
  ].filter(Boolean);
  return `${k.prefix}  ${k.name}  created ${k.createdAt}  ${state}  (#${k.id}; ${details.join('; ')})`;
}

const needs = (what: string, value: string | undefined): string => {
  if (!value) throw new UsageError(what);
  return value;
};

export async function keysCommand(db: Db, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const { values, positionals } = parse(rest, {
    ...SETTINGS,
    key: { type: 'string' },
    name: { type: 'string' },
    'grace-hours': { type: 'string' },
    json: { type: 'boolean' },
  });
  const keyArg = { key: 'KEY' };
  switch (command) {
    case 'create': {
      const name = needs('keys create needs a NAME', positionals[0]);
      const { apiKey, key } = await performCommand(db, ops.createKey, { name, ...settingsOf(values) }, { name: 'NAME' });
      console.log(`Created API key "${apiKey.name}" (prefix ${apiKey.prefix}). It is shown only now:`);
      console.log(key);
      return;
    }
    case 'import': {
      const name = positionals[0];
      if (!name || !values.key) throw new UsageError('keys import needs a NAME and --key VALUE');
      const imported = await performCommand(db, ops.importKey, { name, key: values.key, ...settingsOf(values) }, { name: 'NAME' });
      const plan = imported.plan ? ` on plan ${imported.plan.name}` : '';
      console.log(`Imported API key "${imported.name}" (prefix ${imported.prefix})${plan}; clients sending it are accepted.`);
      return;
    }
    case 'list': {
      const { keys } = await performCommand(db, ops.listKeys, {});
      if (values.json) console.log(JSON.stringify(keys, null, 2));
      else if (keys.length === 0) console.log('No API keys yet: opscan keys create NAME');
      else for (const k of keys) console.log(describe(k));
      return;
    }
    case 'show': {
      const key = await performCommand(db, ops.getKey, { key: needs('keys show needs a KEY', positionals[0]) }, keyArg);
      console.log(values.json ? JSON.stringify(key, null, 2) : describe(key));
      return;
    }
    case 'update': {
      const key = needs('keys update needs a KEY', positionals[0]);
      const updated = await performCommand(db, ops.updateKey, { key, name: values.name, ...settingsOf(values) }, keyArg);
      console.log(`Updated: ${describe(updated)}`);
      return;
    }
    case 'rotate': {
      const key = needs('keys rotate needs a KEY', positionals[0]);
      const rotated = await performCommand(db, ops.rotateKey, { key, graceHours: values['grace-hours'] }, keyArg);
      console.log(
        `Issued ${rotated.apiKey.prefix} to replace ${rotated.replaced.prefix} ("${rotated.apiKey.name}"), which works until ${rotated.replaced.expiresAt}. The new key is shown only now:`,
      );
      console.log(rotated.key);
      return;
    }
    case 'revoke': {
      const revoked = await performCommand(
        db,
        ops.revokeKey,
        { key: needs('keys revoke needs a KEY (its prefix, see opscan keys list)', positionals[0]) },
        keyArg,
      );
      console.log(`Revoked ${revoked.prefix} (${revoked.name})`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown keys command "${command}"` : 'keys needs a command');
  }
}
