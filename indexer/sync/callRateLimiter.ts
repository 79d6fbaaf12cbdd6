/**
 * The pace a JSON-RPC endpoint allows, learned from its refusals. Hosted plans cap calls per second
 * (a batch's members count one each) and answer the excess with HTTP 429 or a rate-limit error; a
 * client that keeps sending at its own pace has most of its calls refused, and a batch larger than
 * the budget is refused every time. So: unlimited until the first refusal; then the pace drops to
 * 70 % of what was being sent in the last second (at most once a second, however many refusals
 * arrive together), sending pauses for the endpoint's Retry-After (1 s without one), batches shrink
 * to what a second allows, and each answered call raises the pace by 1 % of a call a second.
 */

const WINDOW_MS = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class CallRateLimiter {
  /** Calls per second allowed (Infinity until the endpoint refuses one). */
  private rate = Infinity;
  private tokens = 0;
  private refilledAt = 0;
  private pausedUntil = 0;
  private reducedAt = -Infinity;
  /** When recent calls were sent (the last WINDOW_MS), to know the pace that was refused. */
  private readonly sentAt: number[] = [];

  /** The current pace, calls per second (Infinity: no limit learned). */
  get callsPerSecond(): number {
    return this.rate;
  }

  /** The largest batch one second allows. */
  get batchCap(): number {
    return Number.isFinite(this.rate) ? Math.max(1, Math.floor(this.rate)) : Infinity;
  }

  /** Waits until `calls` calls may be sent, and counts them as sent. */
  async take(calls: number): Promise<void> {
    for (;;) {
      const now = performance.now();
      if (now < this.pausedUntil) {
        await sleep(this.pausedUntil - now);
        continue;
      }
      if (!Number.isFinite(this.rate)) break;
      const wanted = Math.min(calls, this.rate);
      this.tokens = Math.min(this.rate, this.tokens + ((now - this.refilledAt) / 1000) * this.rate);
      this.refilledAt = now;
      if (this.tokens >= wanted) {
        this.tokens -= wanted;
        break;
      }
      await sleep(((wanted - this.tokens) / this.rate) * 1000);
    }
    const now = performance.now();
    while (this.sentAt.length > 0 && this.sentAt[0]! < now - WINDOW_MS) this.sentAt.shift();
    for (let i = 0; i < calls; i++) this.sentAt.push(now);
  }

  /**
   * The endpoint refused calls for their pace. Resolves to the new pace when this refusal lowered
   * it (null when an earlier refusal of the same second already did).
   */
  refused(retryAfterMs?: number): number | null {
    const now = performance.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + (retryAfterMs ?? WINDOW_MS));
    this.tokens = 0;
    this.refilledAt = this.pausedUntil;
    if (now - this.reducedAt < WINDOW_MS) return null;
    this.reducedAt = now;
    const recent = this.sentAt.filter((t) => t >= now - WINDOW_MS).length;
    this.rate = Math.max(1, Math.floor(Math.min(this.rate, Math.max(recent, 1)) * 0.7));
    return this.rate;
  }

  /** Calls were answered: the pace creeps back up. */
  answered(calls: number): void {
    if (Number.isFinite(this.rate)) this.rate += calls * 0.01;
  }
}

/** Retry-After as milliseconds (seconds or an HTTP date), or undefined. */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(60_000, Math.max(0, seconds * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(60_000, Math.max(0, at - Date.now()));
}
