/**
 * The bytes of one cache entry: `<tag> <expiresAtMs> <heads>\n<json>`.
 * - tag: `f<final epoch>.<final epoch>…` for final answers, valid across reorgs that stay within
 *   finality (cachePolicy.finalTag; `f` alone for live chain reads), else `e<epoch>.<epoch>…`, the
 *   reorg epochs of the answer's networks (cachePolicy.epochTag);
 * - heads: `h<block>.<block>…`, the indexed block of each of those networks in the database the
 *   answer was computed from, or '-' when the answer does not depend on them (final, live).
 * The heads let the store refuse to replace an entry with one computed from an older state (a read
 * replica a block behind): see `supersedes`, mirrored in the Redis store's script (cacheStore.ts).
 */

const NEWLINE = 0x0a;

export type EntryHeader = { tag: string; expiresAt: number; heads: string };

export const NO_HEADS = '-';

export function encodeEntry(header: EntryHeader, json: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${header.tag} ${header.expiresAt} ${header.heads}\n`), json]);
}

export function parseHeader(raw: Buffer): EntryHeader {
  const [tag = '', expiresAt = '0', heads = NO_HEADS] = raw.subarray(0, raw.indexOf(NEWLINE)).toString('latin1').split(' ');
  return { tag, expiresAt: Number(expiresAt), heads };
}

export function bodyOf(raw: Buffer): Buffer {
  return raw.subarray(raw.indexOf(NEWLINE) + 1);
}

/**
 * Whether a stored entry was computed from a strictly newer state than a candidate replacing it:
 * on every network at least as far (reorg epoch first, then indexed block) and on one further. Only
 * entries that both carry heads for the same networks compare; otherwise the newer write wins.
 */
export function supersedes(stored: EntryHeader, candidate: EntryHeader): boolean {
  if (stored.heads === NO_HEADS || candidate.heads === NO_HEADS) return false;
  const se = stored.tag.slice(1).split('.').map(Number);
  const ce = candidate.tag.slice(1).split('.').map(Number);
  const sh = stored.heads.slice(1).split('.').map(Number);
  const ch = candidate.heads.slice(1).split('.').map(Number);
  if (se.length !== ce.length || sh.length !== ch.length || se.length !== sh.length) return false;
  let further = false;
  for (let i = 0; i < se.length; i++) {
    const order = se[i]! - ce[i]! || sh[i]! - ch[i]!;
    if (order < 0) return false;
    if (order > 0) further = true;
  }
  return further;
}
