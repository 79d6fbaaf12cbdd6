import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets are stored encrypted, never hashed: the dispatcher must recover them to
 * sign. AES-256-GCM with a random 96-bit IV; the webhook id is the associated data, so a ciphertext
 * copied onto another webhook row does not decrypt. The stored form names its key
 * (`<keyId>:<base64 iv|tag|ciphertext>`), so a keyring can hold the current key and older ones.
 */

export type SecretKey = { id: string; key: Buffer };

/** The key that encrypts new secrets, and every key that may decrypt old ones. */
export type Keyring = { current: SecretKey; all: ReadonlyMap<string, SecretKey> };

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Parses a 32-byte key given as 64 hex characters or base64; throws on anything else. */
export function parseSecretKey(text: string): SecretKey {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('a webhook secret key must be 32 bytes, as 64 hex characters or base64');
  // The id is a fingerprint, not the key: safe to store next to each ciphertext.
  const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return { id, key };
}

export function generateSecretKeyText(): string {
  return randomBytes(32).toString('base64');
}

export function createKeyring(current: SecretKey, others: SecretKey[] = []): Keyring {
  const all = new Map<string, SecretKey>();
  for (const k of [current, ...others]) all.set(k.id, k);
  return { current, all };
}

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function encryptSecret(keyring: Keyring, webhookId: string, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  cipher.setAAD(Buffer.from(webhookId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${keyring.current.id}:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

export function decryptSecret(keyring: Keyring, webhookId: string, stored: string): string {
  const [keyId, packed] = stored.split(':');
  const key = keyring.all.get(keyId ?? '');
  if (!key || !packed) throw new Error(`webhook ${webhookId}: its secret was encrypted with an unknown key (${keyId})`);
  const bytes = Buffer.from(packed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key.key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(webhookId));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
