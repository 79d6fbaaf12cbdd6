import { randomUUID } from 'node:crypto';

/**
 * Answers part of whose JSON text is at hand already. A day's active wallets (thousands of
 * addresses) are kept as the bytes of a JSON array: writing those bytes into the body as they are
 * costs a fraction of splitting them into strings and serialising them again, or even of copying
 * them into one large string first.
 *
 * `withJsonText(value, pieces)` marks an object whose JSON text is the concatenation of `pieces()`
 * (strings and UTF-8 buffers); `toJsonBody(answer)` serialises an answer to UTF-8 bytes, writing each
 * marked object's pieces as they are. Everywhere else a marked object is the plain value it is (its
 * fields, JSON.stringify, tRPC), so nothing else needs to know.
 */

export type JsonPieces = ReadonlyArray<string | Buffer>;

/** What a marked object serialises to while toJsonBody runs; a random id, so no string of an answer equals it. */
const PLACEHOLDER = `\u0000jsonText:${randomUUID()}`;
const QUOTED_PLACEHOLDER = JSON.stringify(PLACEHOLDER);

/** The pieces of the marked objects met by the serialisation running now (JSON.stringify is synchronous). */
let collected: JsonPieces[] | null = null;

export function withJsonText<T extends object>(value: T, pieces: () => JsonPieces): T {
  Object.defineProperty(value, 'toJSON', {
    enumerable: false,
    value(this: T): unknown {
      if (!collected) return this;
      collected.push(pieces());
      return PLACEHOLDER;
    },
  });
  return value;
}

/** The UTF-8 bytes of `JSON.stringify(answer)`, with the pieces of each marked object written as they are. */
export function toJsonBody(answer: unknown): Buffer {
  collected = [];
  let text: string;
  let marked: JsonPieces[];
  try {
    text = JSON.stringify(answer);
    marked = collected;
  } finally {
    collected = null;
  }
  if (marked.length === 0) return Buffer.from(text);
  const between = text.split(QUOTED_PLACEHOLDER);
  const chunks: Buffer[] = [Buffer.from(between[0]!)];
  for (let i = 0; i < marked.length; i++) {
    for (const piece of marked[i]!) chunks.push(typeof piece === 'string' ? Buffer.from(piece) : piece);
    chunks.push(Buffer.from(between[i + 1]!));
  }
  return Buffer.concat(chunks);
}
