import type { Queryable } from './db/client.js';
import * as webhookGeneratedKeys from './db/tables/webhookGeneratedKeys.js';
import { createKeyring, generateSecretKeyText, parseSecretKey, type Keyring } from './webhookSecrets.js';

/**
 * The keyring that protects webhook secrets. With WEBHOOK_SECRET_KEY set, that key encrypts new
 * secrets; without it (embedded defaults, `npm start` with no config) a key is generated once and
 * kept in the database, where every process finds the same one. A generated key stays readable after
 * an operator sets WEBHOOK_SECRET_KEY, so webhooks created before keep working.
 */
export async function loadKeyring(db: Queryable, configuredKey: string | undefined): Promise<Keyring> {
  if (configuredKey) {
    const generated = await webhookGeneratedKeys.find(db);
    return createKeyring(parseSecretKey(configuredKey), generated ? [parseSecretKey(generated)] : []);
  }
  return createKeyring(parseSecretKey(await webhookGeneratedKeys.findOrInsert(db, generateSecretKeyText())));
}

const cache = new WeakMap<object, Promise<Keyring>>();

/** loadKeyring, once per database handle (the key does not change while a process runs). */
export function keyringFor(db: Queryable, configuredKey: string | undefined): Promise<Keyring> {
  let keyring = cache.get(db);
  if (!keyring) {
    keyring = loadKeyring(db, configuredKey);
    cache.set(db, keyring);
    keyring.catch(() => cache.delete(db));
  }
  return keyring;
}
