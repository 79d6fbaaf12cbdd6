/**
 * The simulated chain's identifiers: addresses of its actors, block and transaction hashes, and
 * the seeds of its random draws, all pure functions of (seed, kind, numbers). Block and
 * transaction hashes carry their block number (and transaction index) in their last bytes, so a
 * lookup by hash needs no index; the rest of the hash is a 32-bit mix, enough to look random and
 * to reject a hash this chain never made. Only user-op hashes are real keccak (generator.ts).
 */
import { Random } from '../devnet/random.js';

/** murmur3's finaliser: a 32-bit avalanche. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A 32-bit hash of small non-negative numbers (each below 2^53). */
export function mix(...values: number[]): number {
  let h = 0x9747b28c;
  for (const v of values) {
    h = fmix(h ^ (v >>> 0));
    h = fmix(h ^ Math.floor(v / 0x100000000));
  }
  return h;
}

/** `words` × 8 hex digits drawn from `h`. */
function mixHex(h: number, words: number): string {
  let out = '';
  for (let i = 0; i < words; i++)
    out += fmix(h + Math.imul(i + 1, 0x9e3779b9))
      .toString(16)
      .padStart(8, '0');
  return out;
}

export const rng = (...values: number[]): Random => new Random(mix(...values));

/** Who an address belongs to: part of its derivation, so two kinds never share an address. */
export const ActorKind = {
  account: 1,
  owner: 2,
  holder: 3,
  token: 4,
  nft: 5,
  multiToken: 6,
  dapp: 7,
  bundler: 8,
  paymaster: 9,
  factory: 10,
  beneficiary: 11,
  pair: 12,
  spamToken: 13,
  router: 14,
  validator: 15,
} as const;
export type ActorKind = (typeof ActorKind)[keyof typeof ActorKind];

/**
 * The address of actor `id` of `kind`: 12 mixed bytes, then (kind·2^40 + id) xor a seed constant
 * in the last 8, which keeps every (kind, id) distinct. Computed for every party of every log:
 * plain numbers (no BigInt), and a bounded memo for the hot ones (tokens, pairs, holders).
 */
const memos = new Map<number, Map<number, string>>();
const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, '0');

export function actorAddress(seed: number, kind: ActorKind, id: number): string {
  let memo = memos.get(seed);
  if (!memo) memos.set(seed, (memo = new Map<number, string>()));
  const key = kind * 0x10000000000 + id;
  const hit = memo.get(key);
  if (hit) return hit;
  const high = kind * 256 + Math.floor(id / 0x100000000);
  const address = `0x${mixHex(mix(seed, kind, id), 3)}${hex8(high ^ mix(seed, 0xad))}${hex8((id >>> 0) ^ mix(seed, 0xae))}`;
  if (memo.size >= 200_000) memo.delete(memo.keys().next().value!);
  memo.set(key, address);
  return address;
}

const hex64 = (n: number, digits: number): string => n.toString(16).padStart(digits, '0');

/** Block n's hash: 25 mixed bytes, then n in 7. */
export function blockHash(seed: number, n: number): string {
  return n < 0 ? `0x${'0'.repeat(64)}` : `0x${mixHex(mix(seed, 0xb10c, n), 7).slice(0, 50)}${hex64(n, 14)}`;
}

export function blockNumberOfHash(seed: number, hash: string): number | null {
  if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) return null;
  const n = Number.parseInt(hash.slice(52), 16);
  return blockHash(seed, n) === hash.toLowerCase() ? n : null;
}

/** Transaction `index` of block n: 20 mixed bytes, n in 7 bytes, the index in 5. */
export function transactionHash(seed: number, n: number, index: number): string {
  return `0x${mixHex(mix(seed, 0x7a, n, index), 5)}${hex64(n, 14)}${hex64(index, 10)}`;
}

export function locateTransaction(seed: number, hash: string): { block: number; index: number } | null {
  if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) return null;
  const block = Number.parseInt(hash.slice(42, 56), 16);
  const index = Number.parseInt(hash.slice(56), 16);
  return transactionHash(seed, block, index) === hash.toLowerCase() ? { block, index } : null;
}

/** Any other 32 bytes the chain needs (state roots, signatures' r and s): mixed from `values`. */
export function filler32(...values: number[]): string {
  return mixHex(mix(...values), 8);
}

// ABI words, without 0x.
export const quantity = (n: number | bigint): string => `0x${n.toString(16)}`;
export const uintWord = (n: number | bigint): string => n.toString(16).padStart(64, '0');
export const addressWord = (address: string): string => `000000000000000000000000${address.slice(2)}`;
export const topicOf = (address: string): string => `0x${addressWord(address)}`;

/** The (kind, id) of an address actorAddress made, or null for any other address. */
export function actorOf(seed: number, address: string): { kind: ActorKind; id: number } | null {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return null;
  const high = (Number.parseInt(address.slice(26, 34), 16) ^ mix(seed, 0xad)) >>> 0;
  const low = (Number.parseInt(address.slice(34), 16) ^ mix(seed, 0xae)) >>> 0;
  const kind = Math.floor(high / 256) as ActorKind;
  const id = (high % 256) * 0x100000000 + low;
  return actorAddress(seed, kind, id) === address.toLowerCase() ? { kind, id } : null;
}
