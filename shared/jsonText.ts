import { randomUUID } from 'node:crypto';

/**
 * Answers part of whose JSON text is at hand already. A day's active wallets (thousands of
 * addresses) are read from PostgreSQL as the text of a JSON array: writing that text into the body
 * as it is costs a fraction of splitting it into strings and serialising them again.
 *
 * `withJsonText(value, text)` marks an object whose JSON text is `text()`; `toJsonText(answer)`
 * serialises an answer, writing each marked object's text as it is. Everywhere else a marked object
 * is the plain value it is (its fields, JSON.stringify, tRPC), so nothing else needs to know.
 */

/** What a marked object serialises to while toJsonText runs; a random id, so no string of an answer equals it. */
const PLACEHOLDER = `\u0000jsonText:${randomUUID()}`;
const QUOTED_PLACEHOLDER = JSON.stringify(PLACEHOLDER);

/** The texts of the marked objects met by the serialisation running now (JSON.stringify is synchronous). */
let collected: string[] | null = null;

export function withJsonText<T extends object>(value: T, text: () => string): T {
  Object.defineProperty(value, 'toJSON', {
    enumerable: false,
    value(this: T): unknown {
      if (!collected) return this;
      collected.push(text());
      return PLACEHOLDER;
    },
  });
  return value;
}

/** `JSON.stringify(answer)`, with the text of each marked object written as it is. */
export function toJsonText(answer: unknown): string {
  collected = [];
  let text: string;
  let parts: string[];
  try {
    text = JSON.stringify(answer);
    parts = collected;
  } finally {
    collected = null;
  }
  if (parts.length === 0) return text;
  const pieces = text.split(QUOTED_PLACEHOLDER);
  const joined: string[] = [pieces[0]!];
  for (let i = 0; i < parts.length; i++) joined.push(parts[i]!, pieces[i + 1]!);
  return joined.join('');
}
