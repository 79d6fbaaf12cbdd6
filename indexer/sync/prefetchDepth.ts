/**
 * How many ranges a backfill keeps in flight. A range's fetch is a few round trips one after the
 * other (its last header, its logs, then its receipts and transactions), so at a hosted node's
 * 50–200 ms the writer would wait for every range unless enough of them are on their way: by
 * Little's law, as many as a fetch's latency holds ranges the writer gets through. That latency is
 * not known in advance (it is the provider's distance and load), so the depth is learned from what
 * the provider answers, as TCP learns its window: twice as many ranges whenever the writer had to
 * wait for one until the provider first refuses calls for their pace (a backfill through 200 ms
 * reaches the depth it needs within a few ranges, not a few dozen), one more a wait after that,
 * half as many at each refusal (more in flight would only queue behind the learned calls-per-second
 * pace), and never more than the raw logs the memory budget allows in flight.
 */

export type PrefetchDepthOptions = {
  /** The depth to start from and the least kept (the tuning's prefetchRanges). */
  min: number;
  /** The most ranges in flight, however far the provider is. */
  max: number;
  /** Raw logs (EntryPoint and token logs, before filtering) the ranges in flight may hold together. */
  logsInFlight: number;
};

/** A wait shorter than this is scheduling noise, not a starved writer. */
const STARVED_MS = 5;

export class PrefetchDepth {
  private depth: number;
  /** Raw logs per range, a moving average of the ranges fetched (0: none yet). */
  private logsPerRange = 0;
  /** The provider has refused calls for their pace: growth is one range at a time from then on. */
  private refused = false;

  constructor(private readonly options: PrefetchDepthOptions) {
    this.depth = Math.max(1, options.min);
  }

  /** Ranges to keep in flight now. */
  get current(): number {
    const byMemory = this.logsPerRange > 0 ? Math.floor(this.options.logsInFlight / this.logsPerRange) : this.options.max;
    return Math.max(Math.max(1, this.options.min), Math.min(this.depth, byMemory));
  }

  /** A range arrived holding `logs` raw logs. */
  fetched(logs: number): void {
    this.logsPerRange = this.logsPerRange === 0 ? logs : this.logsPerRange * 0.8 + logs * 0.2;
  }

  /** The writer waited `ms` for the next range: the fetch is behind, more go out. */
  waited(ms: number): void {
    if (ms < STARVED_MS) return;
    // Grown from what is in flight (the memory bound may hold it below the depth reached).
    const from = Math.min(this.depth, this.current);
    this.depth = Math.min(this.options.max, this.refused ? from + 1 : from * 2);
  }

  /** The provider refused calls for their pace since the last look: half as many in flight. */
  rateLimited(): void {
    this.refused = true;
    this.depth = Math.max(Math.max(1, this.options.min), Math.floor(this.depth / 2));
  }
}
