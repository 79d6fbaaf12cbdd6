/**
 * A Bloom filter over addresses: "maybe present" or "certainly absent", in about 1.2 bytes per
 * address at a 1 % false-positive rate (10 million addresses: 12 MB, off the JS heap), where a Set
 * of their strings takes ~100 bytes each on the heap. No deletion: a removed address stays a
 * (harmless) false positive.
 */
export class AddressBloomFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;
  private readonly hashCount: number;
  private items = 0;

  /** Sized for `capacity` addresses at `falsePositiveRate` (more addresses raise the rate). */
  constructor(
    readonly capacity: number,
    falsePositiveRate = 0.01,
  ) {
    this.size = Math.max(1024, Math.ceil((capacity * -Math.log(falsePositiveRate)) / Math.LN2 ** 2));
    this.hashCount = Math.max(1, Math.round(-Math.log2(falsePositiveRate)));
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
    for (let i = 0; i < this.hashCount; i++) {
      const bit = h % this.size;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
      h = (h + step) >>> 0;
    }
  }

  mayContain(address: string): boolean {
    const [h1, step] = hashes(address);
    let h = h1;
    for (let i = 0; i < this.hashCount; i++) {
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

/**
 * A Bloom filter that grows (a scalable Bloom filter, Almeida et al. 2007): when its newest stage is
 * full, a stage of twice the capacity at half the false-positive rate is added, so the rate stays
 * under twice the first stage's whatever the count, and the addresses need not be counted first.
 */
export class GrowingAddressFilter {
  private readonly stages: AddressBloomFilter[];

  constructor(
    private readonly firstCapacity: number,
    private readonly falsePositiveRate = 0.01,
  ) {
    this.stages = [new AddressBloomFilter(firstCapacity, falsePositiveRate / 2)];
  }

  get count(): number {
    return this.stages.reduce((n, s) => n + s.count, 0);
  }

  get bytes(): number {
    return this.stages.reduce((n, s) => n + s.bytes, 0);
  }

  add(address: string): void {
    let last = this.stages.at(-1)!;
    if (last.count >= last.capacity) {
      const k = this.stages.length;
      last = new AddressBloomFilter(this.firstCapacity * 2 ** k, this.falsePositiveRate / 2 ** (k + 1));
      this.stages.push(last);
    }
    last.add(address);
  }

  mayContain(address: string): boolean {
    return this.stages.some((s) => s.mayContain(address));
  }
}
