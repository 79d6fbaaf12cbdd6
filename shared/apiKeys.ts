import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys look like `ops_<32 base62 chars>` (~190 bits). Only the SHA-256 of the whole key is
 * stored (a fast hash is right for high-entropy keys, and lookup by hash avoids timing leaks);
 * the first PREFIX_LENGTH characters are kept in clear to list and revoke keys.
 */
export const KEY_PREFIX = 'ops_';
export const PREFIX_LENGTH = KEY_PREFIX.length + 8;
const BODY_LENGTH = 32;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  let body = '';
  // Rejection sampling keeps every base62 character equally likely.
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(BODY_LENGTH)) {
      if (byte < 248 && body.length < BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  const key = KEY_PREFIX + body;
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

/** What a key issued elsewhere (e.g. a JiffyScan key, 40 alphanumerics) may look like to be imported. */
export const IMPORTED_KEY_PATTERN = /^[\x21-\x7e]{16,128}$/;

/**
 * A key from a previous deployment, stored like a generated one (its hash, and its first
 * PREFIX_LENGTH characters to list and revoke it), so that clients configured with it keep working.
 */
export function importApiKey(key: string): { prefix: string; hash: string } {
  if (!IMPORTED_KEY_PATTERN.test(key)) {
    throw new Error('An imported key must be 16 to 128 printable ASCII characters without spaces.');
  }
  return { prefix: key.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
