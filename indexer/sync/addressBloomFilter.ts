/**
 * A Bloom filter over addresses: "maybe present" or "certainly absent", in about 1.2 bytes per
 * address at a 1 % false-positive rate (10 million addresses: 12 MB, off the JS heap), where a Set
 * of their strings takes ~100 bytes each on the heap. No deletion: a removed address stays a
 * (harmless) false positive until the filter is built again.
 */

const BITS_PER_ITEM = 9.6; // -ln(0.01) / ln(2)^2
const HASHES = 7;

export class AddressBloomFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;
  private items = 0;

  constructor(readonly capacity: number) {
    this.size = Math.max(1024, Math.ceil(capacity * BITS_PER_ITEM));
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
  }

  get count(): number {
    return this.items;
  }

  /** Bytes the filter holds. */
  get bytes(): number {
    return this.bits.byteLength;
  }

  add(address: string): void {
    this.items++;
    const [h1, step] = hashes(address);
    let h = h1;
    for (let i = 0; i < HASHES; i++) {
      const bit = h % this.size;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
      h = (h + step) >>> 0;
    }
  }

  mayContain(address: string): boolean {
    const [h1, step] = hashes(address);
    let h = h1;
    for (let i = 0; i < HASHES; i++) {
      const bit = h % this.size;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
      h = (h + step) >>> 0;
    }
    return true;
  }
}

/**
 * Two 32-bit hashes (Kirsch–Mitzenmacher double hashing) from the address's own hex digits: an
 * address is a hash already, but vanity addresses share leading zeros, so each hash folds a word
 * from the start with one from the end.
 */
function hashes(address: string): [number, number] {
  const word = (from: number): number => Number.parseInt(address.slice(from, from + 8), 16) >>> 0;
  const h1 = (word(2) ^ word(34)) >>> 0;
  const h2 = (word(10) ^ word(26) ^ word(18)) | 1;
  return [h1, h2 >>> 0];
}
