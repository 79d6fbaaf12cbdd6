/**
 * Text that comes from the chain, made storable on its way in. Anyone can deploy a contract whose
 * `name()` or revert string holds bytes PostgreSQL's `text` and `jsonb` refuse, and one refused
 * write would hold a network's cursor at that block. Every writer of such text (token metadata,
 * decoded revert messages, node traces) goes through this module, and the rule is one:
 *
 * - UTF-8 is decoded leniently: a byte sequence that is not UTF-8 becomes U+FFFD (�);
 * - NUL (U+0000) is removed: neither `text` nor `jsonb` can hold it;
 * - a lone UTF-16 surrogate (JSON from a node may carry one) becomes U+FFFD;
 * - at most CHAIN_TEXT_MAX_CHARS characters are kept.
 *
 * Everything else (emoji, tabs, newlines, control characters) is kept as it is. The raw bytes stay
 * where the API exposes them already (an op's `revertReason`).
 */

/** The longest text kept from the chain: a token name or revert string longer than this is cut. */
export const CHAIN_TEXT_MAX_CHARS = 10_000;

const utf8 = new TextDecoder('utf-8', { fatal: false });

const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` without NUL, its lone surrogates replaced: what text and jsonb accept. */
function storableChars(text: string): string {
  // The common case, plain text, is two scans.
  if (!text.includes('\u0000') && !SURROGATE.test(text)) return text;
  return text.replaceAll('\u0000', '').replace(LONE_SURROGATE, '\ufffd');
}

/** `text` as opscan stores it (see the rule above). */
export function storableText(text: string): string {
  const kept = storableChars(text);
  if (kept.length <= CHAIN_TEXT_MAX_CHARS) return kept;
  // Not between the two halves of a surrogate pair.
  const end = /[\ud800-\udbff]/.test(kept[CHAIN_TEXT_MAX_CHARS - 1]!) ? CHAIN_TEXT_MAX_CHARS - 1 : CHAIN_TEXT_MAX_CHARS;
  return kept.slice(0, end);
}

/** UTF-8 bytes from the chain (hex with or without 0x, or raw) as storable text. */
export function storableTextFromUtf8(bytes: string | Uint8Array): string {
  const raw = typeof bytes === 'string' ? Buffer.from(bytes.startsWith('0x') ? bytes.slice(2) : bytes, 'hex') : bytes;
  return storableText(utf8.decode(raw));
}

/**
 * The JSON text of a value read from the chain (a node's call trace), as `jsonb` accepts it: NUL
 * removed from its strings and lone surrogates replaced, none cut (a frame's input is long hex).
 * JSON.stringify writes NUL and a lone surrogate as `\u` escapes,
 * which jsonb refuses; the common trace has neither and is stringified once.
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (!/\\u(0000|d[89a-f])/i.test(text)) return text;
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? storableChars(v) : v));
}
