/**
 * A small ABI encoder for the calldata the simulator writes for every op (handleOps, account
 * execute/executeBatch): ethers' Interface took ~2.4 ms per bundle, most of a bundle's cost. Values
 * are already hex; the tests check the output against ethers' encoding of the real ABIs.
 */

/** An ABI value: a static word (64 hex digits), dynamic bytes, a tuple, or a dynamic array. */
export type AbiValue = { word: string } | { bytes: string } | { tuple: AbiValue[] } | { array: AbiValue[] };

export const word = (hex64: string): AbiValue => ({ word: hex64 });
export const uint = (n: number | bigint): AbiValue => ({ word: n.toString(16).padStart(64, '0') });
export const address = (a: string): AbiValue => ({ word: a.slice(2).toLowerCase().padStart(64, '0') });
/** bytes32 given as 0x-prefixed hex. */
export const bytes32 = (h: string): AbiValue => ({ word: h.slice(2).toLowerCase() });
export const bytes = (h: string): AbiValue => ({ bytes: h.slice(2).toLowerCase() });
export const tuple = (...items: AbiValue[]): AbiValue => ({ tuple: items });
export const array = (items: AbiValue[]): AbiValue => ({ array: items });

const isDynamic = (v: AbiValue): boolean => 'bytes' in v || 'array' in v || ('tuple' in v && v.tuple.some(isDynamic));

/** The head/tail encoding of `values` as one tuple, without 0x. */
export function encodeTuple(values: AbiValue[]): string {
  const heads: string[] = [];
  const tails: string[] = [];
  let headBytes = 0;
  for (const v of values) headBytes += isDynamic(v) ? 32 : staticSize(v);
  let offset = headBytes;
  for (const v of values) {
    if (isDynamic(v)) {
      const tail = encodeValue(v);
      heads.push(offset.toString(16).padStart(64, '0'));
      tails.push(tail);
      offset += tail.length / 2;
    } else heads.push(encodeValue(v));
  }
  return heads.join('') + tails.join('');
}

function staticSize(v: AbiValue): number {
  return 'tuple' in v ? v.tuple.reduce((s, x) => s + staticSize(x), 0) : 32;
}

function encodeValue(v: AbiValue): string {
  if ('word' in v) return v.word;
  if ('tuple' in v) return encodeTuple(v.tuple);
  if ('array' in v) return v.array.length.toString(16).padStart(64, '0') + encodeTuple(v.array);
  const len = v.bytes.length / 2;
  const padded = Math.ceil(len / 32) * 64;
  return len.toString(16).padStart(64, '0') + v.bytes.padEnd(padded, '0');
}

/** selector (0x + 8 hex) followed by the encoded arguments. */
export function encodeCall(selector: string, args: AbiValue[]): string {
  return selector + encodeTuple(args);
}
