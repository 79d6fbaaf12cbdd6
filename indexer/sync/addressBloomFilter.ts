/**
 * A Bloom filter over addresses: "maybe present" or "certainly absent", in about 1.2 bytes per
 * address at a 1 % false-positive rate (10 million addresses: 12 MB, off the JS heap), where a Set
 * of their strings takes ~100 bytes each on the heap. No deletion: a removed address stays a
 * (harmless) false positive.
 */
export class AddressBloomFilter {
  readonly bits: Uint32Array;
  private readonly size: number;
  private readonly hashCount: number;
  private items = 0;

  /**
   * Sized for `capacity` addresses at `falsePositiveRate` (more addresses raise the rate); `stored`:
   * the bits and count of a filter of the same capacity and rate, saved earlier (their length is
   * checked by the caller, `GrowingAddressFilter.fromStored`).
   */
  constructor(
    readonly capacity: number,
    falsePositiveRate = 0.01,
    stored?: { bits: Uint32Array; count: number },
  ) {
    this.size = AddressBloomFilter.sizeInBits(capacity, falsePositiveRate);
    this.hashCount = Math.max(1, Math.round(-Math.log2(falsePositiveRate)));
    this.bits = stored?.bits ?? new Uint32Array(Math.ceil(this.size / 32));
    this.items = stored?.count ?? 0;
  }

  static sizeInBits(capacity: number, falsePositiveRate: number): number {
    return Math.max(1024, Math.ceil((capacity * -Math.log(falsePositiveRate)) / Math.LN2 ** 2));
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
 * How a stored filter's bits are laid out and hashed (`hashes` above, the stages' sizes below, the
 * 32-bit words in little-endian order as in memory on every platform Node runs on): a filter stored
 * under another layout is not read, it is built again from the addresses.
 */
export const FILTER_LAYOUT = 1;

/** A GrowingAddressFilter as stored (known_address_filters): its stages' bits one after the other. */
export type StoredAddressFilter = {
  layout: number;
  firstCapacity: number;
  falsePositiveRate: number;
  /** Addresses added to each stage. */
  stageCounts: number[];
  bits: Buffer;
};

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
    stages?: AddressBloomFilter[],
  ) {
    this.stages = stages ?? [GrowingAddressFilter.stage(firstCapacity, falsePositiveRate, 0)];
  }

  /** Stage `k`: 2^k times the first capacity, at 2^-(k+1) times the rate. */
  private static stage(firstCapacity: number, falsePositiveRate: number, k: number, stored?: { bits: Uint32Array; count: number }) {
    return new AddressBloomFilter(firstCapacity * 2 ** k, falsePositiveRate / 2 ** (k + 1), stored);
  }

  /** The filter `stored` holds, or null when it was stored under another layout or its bits do not fit its stages. */
  static fromStored(stored: StoredAddressFilter): GrowingAddressFilter | null {
    const { firstCapacity, falsePositiveRate, stageCounts, bits } = stored;
    if (stored.layout !== FILTER_LAYOUT || stageCounts.length === 0) return null;
    const words = stageCounts.map((_, k) =>
      Math.ceil(AddressBloomFilter.sizeInBits(firstCapacity * 2 ** k, falsePositiveRate / 2 ** (k + 1)) / 32),
    );
    if (words.reduce((a, b) => a + b, 0) * 4 !== bits.length) return null;
    let at = 0;
    const stages = stageCounts.map((count, k) => {
      // Copied into words of their own: the buffer's bytes need not be 4-aligned.
      const stageBits = new Uint32Array(words[k]!);
      new Uint8Array(stageBits.buffer).set(bits.subarray(at, at + stageBits.byteLength));
      at += stageBits.byteLength;
      return GrowingAddressFilter.stage(firstCapacity, falsePositiveRate, k, { bits: stageBits, count });
    });
    return new GrowingAddressFilter(firstCapacity, falsePositiveRate, stages);
  }

  toStored(): StoredAddressFilter {
    return {
      layout: FILTER_LAYOUT,
      firstCapacity: this.firstCapacity,
      falsePositiveRate: this.falsePositiveRate,
      stageCounts: this.stages.map((s) => s.count),
      bits: Buffer.concat(this.stages.map((s) => Buffer.from(s.bits.buffer, s.bits.byteOffset, s.bits.byteLength))),
    };
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
      last = GrowingAddressFilter.stage(this.firstCapacity, this.falsePositiveRate, this.stages.length);
      this.stages.push(last);
    }
    last.add(address);
  }

  mayContain(address: string): boolean {
    return this.stages.some((s) => s.mayContain(address));
  }
}
