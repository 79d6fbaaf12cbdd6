/**
 * One run of ranges from a first block to a last through four overlapping stages: each range is
 * fetched ahead of the writer (as many in flight as `depth.current` says), decoded in chain order as
 * soon as it and the range before it are in, readied for its write beside the other ranges' fetches,
 * and written in chain order, up to `concurrentWrites` writes running at once (each write is handed
 * the one before it, which commits first). Only the decoded rows wait for the writer, never the
 * fetched answers. When `shouldStop()` holds, the writer takes no further range: the writes started
 * finish, and the ranges fetched ahead are left (their results dropped, their failures handled).
 * The first failure of a write, or of a range the writer takes, ends the run once the writes
 * started have settled; the oldest write's failure is the one thrown (later ones follow from it).
 */

export type BlockRange = { fromBlock: number; toBlock: number };

/** A range handed to the writer, and how long the writer waited before starting it. */
export type RangeWrite = BlockRange & {
  /** The write before this one (undefined for the first, or when it settled): it commits first. */
  after: Promise<void> | undefined;
  /** The range reaches the run's last block. */
  last: boolean;
  /** How long the writer waited for this range to be decoded and readied. */
  waitedForRangeMs: number;
  /** How long it then waited for a write slot (at most concurrentWrites at once). */
  waitedForWriteMs: number;
  /** performance.now() when the write started. */
  startedAt: number;
};

export type RangePipelineOptions<Fetched, Decoded> = {
  fromBlock: number;
  toBlock: number;
  /** Blocks in the next range, read as each range is planned (the log range estimate adapts as ranges are fetched). */
  rangeSize: () => number;
  /** Ranges to keep fetched or decoded ahead of the writer (read before each is planned), told how long the writer waited for each. */
  depth: { readonly current: number; waited(ms: number): void };
  /** Writes running at once. */
  concurrentWrites: number;
  fetch: (range: BlockRange) => Promise<Fetched>;
  /** In chain order: a range is decoded once it is fetched and the range before it is decoded (or failed). */
  decode: (fetched: Fetched, range: BlockRange) => Promise<Decoded>;
  /** After its decoding, beside the other ranges' fetches (not on the writer's path). */
  prepareWrite: (decoded: Decoded, range: BlockRange) => Promise<Decoded>;
  write: (decoded: Decoded, range: RangeWrite) => Promise<void>;
};

export class RangePipeline<Fetched, Decoded> {
  constructor(private readonly options: RangePipelineOptions<Fetched, Decoded>) {}

  /** Runs every range of the run through the stages, unless `shouldStop()` turns true first. */
  async run(shouldStop: () => boolean): Promise<void> {
    const { toBlock: lastBlock, depth } = this.options;
    const queue: Array<{ range: BlockRange; ready: Promise<Decoded> }> = [];
    let next = this.options.fromBlock;
    let previousDecoded: Promise<unknown> = Promise.resolve();
    const plan = (): void => {
      const range = { fromBlock: next, toBlock: Math.min(lastBlock, next + this.options.rangeSize() - 1) };
      const fetched = this.options.fetch(range);
      const decoded = Promise.all([fetched, previousDecoded]).then(([raw]) => this.options.decode(raw, range));
      previousDecoded = decoded.catch(() => undefined);
      const ready = decoded.then((d) => this.options.prepareWrite(d, range));
      ready.catch(() => undefined); // awaited in order below; a failure ahead must not go unhandled
      queue.push({ range, ready });
      next = range.toBlock + 1;
    };
    const writes: Array<Promise<void>> = [];
    try {
      while ((next <= lastBlock || queue.length > 0) && !shouldStop()) {
        while (queue.length < depth.current && next <= lastBlock) plan();
        const { range, ready } = queue.shift()!;
        const t0 = performance.now();
        const decoded = await ready;
        const t1 = performance.now();
        depth.waited(t1 - t0);
        if (writes.length >= this.options.concurrentWrites) await writes.shift();
        const startedAt = performance.now();
        const write = this.options.write(decoded, {
          ...range,
          after: writes.at(-1),
          last: range.toBlock >= lastBlock,
          waitedForRangeMs: t1 - t0,
          waitedForWriteMs: startedAt - t1,
          startedAt,
        });
        write.catch(() => undefined); // awaited in order below
        writes.push(write);
      }
      // Oldest first: the first failure is the root cause (later writes fail because of it).
      while (writes.length > 0) await writes.shift();
    } catch (err) {
      await Promise.allSettled(writes);
      throw err;
    }
  }
}
