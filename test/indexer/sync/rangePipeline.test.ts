/**
 * The range pipeline on its own, its stages played by functions that record what they were given:
 * ranges written in chain order whatever order their fetches end in, no more ranges ahead of the
 * writer than the depth allows and no more writes at once than concurrentWrites, a stop taking no
 * further range while ranges are in flight, and the first failure thrown once the writes settled.
 */
import { expect } from 'chai';
import { RangePipeline, type BlockRange, type RangePipelineOptions, type RangeWrite } from '../../../indexer/sync/rangePipeline.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const name = (r: BlockRange): string => `${r.fromBlock}-${r.toBlock}`;

/** Stages that record their calls; each can be given a delay per range (by its first block). */
function recordingStages(options: {
  fetchMs?: (fromBlock: number) => number;
  writeMs?: (fromBlock: number) => number;
  fail?: { stage: 'fetch' | 'write'; fromBlock: number };
}) {
  const log = {
    fetched: [] as string[],
    decoded: [] as string[],
    prepared: [] as string[],
    writesStarted: [] as RangeWrite[],
    writesEnded: [] as string[],
    /** Ranges whose fetch started and that the writer has not taken yet, at most. */
    maxAhead: 0,
    /** Writes running at once, at most. */
    maxWrites: 0,
  };
  let fetchesStarted = 0;
  let writing = 0;
  const stages: Pick<RangePipelineOptions<BlockRange, string>, 'fetch' | 'decode' | 'prepareWrite' | 'write'> = {
    fetch: async (range) => {
      fetchesStarted++;
      log.maxAhead = Math.max(log.maxAhead, fetchesStarted - log.writesStarted.length);
      await sleep(options.fetchMs?.(range.fromBlock) ?? 0);
      if (options.fail?.stage === 'fetch' && options.fail.fromBlock === range.fromBlock) throw new Error(`fetch ${name(range)} failed`);
      log.fetched.push(name(range));
      return range;
    },
    decode: async (fetched, range) => {
      expect(fetched).to.deep.equal(range);
      log.decoded.push(name(range));
      return name(range);
    },
    prepareWrite: async (decoded) => {
      await sleep(1);
      log.prepared.push(decoded);
      return `${decoded} ready`;
    },
    write: async (decoded, range) => {
      log.writesStarted.push(range);
      expect(decoded).to.equal(`${name(range)} ready`);
      writing++;
      log.maxWrites = Math.max(log.maxWrites, writing);
      try {
        await sleep(options.writeMs?.(range.fromBlock) ?? 0);
        if (options.fail?.stage === 'write' && options.fail.fromBlock === range.fromBlock) throw new Error(`write ${name(range)} failed`);
        log.writesEnded.push(name(range));
      } finally {
        writing--;
      }
    },
  };
  return { log, stages };
}

function pipeline(
  stages: ReturnType<typeof recordingStages>['stages'],
  options: Partial<RangePipelineOptions<BlockRange, string>> = {},
): RangePipeline<BlockRange, string> {
  return new RangePipeline({
    fromBlock: 100,
    toBlock: 199,
    rangeSize: () => 10,
    depth: { current: 3, waited: () => undefined },
    concurrentWrites: 2,
    ...stages,
    ...options,
  });
}

describe('RangePipeline', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown): void => void unhandled.push(err);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('decodes and writes the ranges in chain order, whatever order their fetches end in', async () => {
    // Each range's fetch is slower than the next one's: they end in reverse order within the depth.
    const { log, stages } = recordingStages({ fetchMs: (from) => 40 - ((from - 100) / 10) * 3, writeMs: () => 2 });
    await pipeline(stages).run(() => false);
    const inOrder = Array.from({ length: 10 }, (_, i) => `${100 + i * 10}-${109 + i * 10}`);
    expect(log.fetched.slice(0, 3), 'fetches ended out of order').to.not.deep.equal(inOrder.slice(0, 3));
    expect(log.decoded).to.deep.equal(inOrder);
    expect(log.writesStarted.map(name)).to.deep.equal(inOrder);
    expect(log.writesEnded).to.deep.equal(inOrder);
    expect(log.writesStarted.map((w) => w.last)).to.deep.equal([...Array<boolean>(9).fill(false), true]);
  });

  it('covers the blocks exactly, each range as long as rangeSize says when it is planned', async () => {
    const sizes = [5, 30, 1, 200];
    let planned = 0;
    const { log, stages } = recordingStages({});
    await pipeline(stages, { rangeSize: () => sizes[Math.min(planned++, sizes.length - 1)]! }).run(() => false);
    expect(log.writesStarted.map(name)).to.deep.equal(['100-104', '105-134', '135-135', '136-199']);
  });

  it('keeps no more ranges ahead of the writer than the depth, and no more writes at once than concurrentWrites', async () => {
    // Slow writes: the fetches would run far ahead without back-pressure.
    const { log, stages } = recordingStages({ writeMs: () => 15 });
    await pipeline(stages, { depth: { current: 3, waited: () => undefined }, concurrentWrites: 2 }).run(() => false);
    expect(log.writesEnded).to.have.length(10);
    expect(log.maxAhead).to.equal(3);
    expect(log.maxWrites).to.equal(2);
  });

  it('follows the depth as it changes, and tells it how long the writer waited for each range', async () => {
    const waits: number[] = [];
    let current = 1;
    const { log, stages } = recordingStages({ fetchMs: () => 10 });
    const depth = {
      get current() {
        return current;
      },
      waited: (ms: number) => {
        waits.push(ms);
        current = 4;
      },
    };
    await pipeline(stages, { depth, toBlock: 299 }).run(() => false);
    expect(waits).to.have.length(20);
    expect(waits[0], 'the first range was fetched while the writer waited').to.be.greaterThan(5);
    expect(log.maxAhead).to.equal(4);
  });

  it('takes no further range once told to stop, lets the writes started finish, and leaves the ranges ahead', async () => {
    // A range fetched ahead fails after the stop: nothing may go unhandled.
    const { log, stages } = recordingStages({
      writeMs: () => 20,
      fetchMs: (from) => (from >= 130 ? 60 : 0),
      fail: { stage: 'fetch', fromBlock: 140 },
    });
    // Told to stop once two writes started, ranges 120–149 being in flight then.
    await pipeline(stages, { concurrentWrites: 2 }).run(() => log.writesStarted.length >= 2);
    expect(log.writesStarted.map(name), 'no range taken after the stop').to.deep.equal(['100-109', '110-119']);
    expect(log.writesEnded, 'the writes started finished before run() resolved').to.deep.equal(['100-109', '110-119']);
    await sleep(120); // the ranges fetched ahead end (one failing) after the run
    expect(log.fetched).to.include('130-139');
    expect(log.writesStarted).to.have.length(2);
    expect(unhandled).to.deep.equal([]);
  });

  it('throws the first failed write once the writes started have settled, and starts no later range', async () => {
    const { log, stages } = recordingStages({ writeMs: (from) => (from === 110 ? 30 : 5), fail: { stage: 'write', fromBlock: 110 } });
    let error: unknown;
    await pipeline(stages, { concurrentWrites: 2 })
      .run(() => false)
      .catch((err: unknown) => (error = err));
    expect((error as Error).message).to.equal('write 110-119 failed');
    const started = log.writesStarted.map(name);
    expect(started.slice(0, 3)).to.deep.equal(['100-109', '110-119', '120-129']);
    expect(started, 'no range after the one waiting for the failed write').to.have.length(3);
    expect(log.writesEnded).to.deep.equal(['100-109', '120-129']);
    await sleep(20);
    expect(unhandled).to.deep.equal([]);
  });

  it('throws a range that failed to fetch when the writer reaches it, after the writes before it', async () => {
    const { log, stages } = recordingStages({ writeMs: () => 5, fail: { stage: 'fetch', fromBlock: 130 } });
    let error: unknown;
    await pipeline(stages)
      .run(() => false)
      .catch((err: unknown) => (error = err));
    expect((error as Error).message).to.equal('fetch 130-139 failed');
    expect(log.writesEnded).to.deep.equal(['100-109', '110-119', '120-129']);
    await sleep(20);
    expect(log.decoded, 'a range after the failed one is still decoded').to.include('140-149');
    expect(unhandled).to.deep.equal([]);
  });
});
