/**
 * The pace a JSON-RPC endpoint allows, learned from its refusals. Hosted plans cap calls per second
 * (a batch's members count one each) and answer the excess with HTTP 429 or a rate-limit error; a
 * client that keeps sending at its own pace has most of its calls refused, and a batch larger than
 * the budget is refused every time.
 *
 * A provider's bad minute also answers 429s, a share of requests whatever the pace, beside its 5xx
 * and dropped answers. Slowing down for those helps nothing and costs the minute's progress (a
 * pace cut to 70 % at each one fell to a call or two a second). So a refusal is taken for the
 * plan's limit only when refusals are a large share of the recent requests (a client over its
 * plan has most of them refused; a bad minute refuses a few); a lone refusal is retried as any
 * fault is, after the endpoint's Retry-After when it gives one.
 *
 * Unlimited until the limit is seen; then the pace drops to 70 % of what was being sent in the last
 * second (at most once a second), sending pauses for the endpoint's Retry-After (1 s without one),
 * and batches shrink to what a second allows. Each second without a refusal raises the pace by a
 * quarter, so it is back at what the endpoint takes within seconds, and unlimited again once it is
 * twice the pace that was refused.
 */

const WINDOW_MS = 1_000;
/** Recent requests looked at to tell the plan's limit from a bad minute. */
const SHARE_WINDOW_MS = 2_000;
/** Refusals at least this share of the recent requests: the pace is refused. */
const LIMIT_SHARE = 1 / 3;
/** Fewer refusals than this in the window never mean a limit (one or two are any provider's noise). */
const LIMIT_MIN_REFUSALS = 3;
const CUT = 0.7;
const CLIMB = 1.25;

/** Waits `ms`; rejects with the signal's reason when it aborts first. */
export const abortableSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Drops the times before `since` from the front of `times` (kept in order). */
function trim(times: number[], since: number): void {
  while (times.length > 0 && times[0]! < since) times.shift();
}

export class CallRateLimiter {
  /** Calls per second allowed (Infinity until the endpoint's limit is seen). */
  private rate = Infinity;
  private tokens = 0;
  private refilledAt = 0;
  private pausedUntil = 0;
  private reducedAt = -Infinity;
  /** When the pace last rose or was cut: it rises once a second while the limit is not seen again. */
  private raisedAt = -Infinity;
  /** The pace that was refused, calls per second: twice that and the limit is forgotten. */
  private refusedPace = Infinity;
  /** When recent calls were sent (the last WINDOW_MS), to know the pace that was refused. */
  private readonly sentAt: number[] = [];
  /** When recent requests were sent, and refused for their pace (the last SHARE_WINDOW_MS). */
  private readonly requestsAt: number[] = [];
  private readonly refusedAt: number[] = [];

  /** The current pace, calls per second (Infinity: no limit learned). */
  get callsPerSecond(): number {
    return this.rate;
  }

  /** The largest batch one second allows. */
  get batchCap(): number {
    return Number.isFinite(this.rate) ? Math.max(1, Math.floor(this.rate)) : Infinity;
  }

  /** Waits until a request of `calls` calls may be sent, and counts it as sent; rejects when `signal` aborts. */
  async take(calls: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = performance.now();
      if (now < this.pausedUntil) {
        await abortableSleep(this.pausedUntil - now, signal);
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
      await abortableSleep(((wanted - this.tokens) / this.rate) * 1000, signal);
    }
    const now = performance.now();
    trim(this.sentAt, now - WINDOW_MS);
    for (let i = 0; i < calls; i++) this.sentAt.push(now);
    trim(this.requestsAt, now - SHARE_WINDOW_MS);
    this.requestsAt.push(now);
  }

  /**
   * The endpoint refused a request for its pace. Resolves to the new pace when this refusal showed
   * the plan's limit and lowered the pace, else null (a bad minute's refusal, or the limit already
   * acted on this second).
   */
  refused(retryAfterMs?: number): number | null {
    const now = performance.now();
    trim(this.refusedAt, now - SHARE_WINDOW_MS);
    this.refusedAt.push(now);
    trim(this.requestsAt, now - SHARE_WINDOW_MS);
    if (retryAfterMs !== undefined) this.pause(now, retryAfterMs);
    const limited = this.refusedAt.length >= LIMIT_MIN_REFUSALS && this.refusedAt.length >= this.requestsAt.length * LIMIT_SHARE;
    if (!limited) return null;
    this.pause(now, retryAfterMs ?? WINDOW_MS);
    if (now - this.reducedAt < WINDOW_MS) return null;
    this.reducedAt = this.raisedAt = now;
    trim(this.sentAt, now - WINDOW_MS);
    const recent = Math.max(this.sentAt.length, 1);
    this.refusedPace = Math.min(this.refusedPace, recent);
    this.rate = Math.max(1, Math.floor(Math.min(this.rate, recent) * CUT));
    return this.rate;
  }

  /** Calls were answered: each second without a refusal, the pace climbs back. */
  answered(calls: number): void {
    if (!Number.isFinite(this.rate) || calls === 0) return;
    const now = performance.now();
    if (now - this.raisedAt < WINDOW_MS) return;
    this.raisedAt = now;
    this.rate *= CLIMB;
    if (this.rate >= 2 * this.refusedPace) {
      this.rate = Infinity;
      this.refusedPace = Infinity;
    }
  }

  private pause(now: number, ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    this.tokens = 0;
    this.refilledAt = this.pausedUntil;
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
