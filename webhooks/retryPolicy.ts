/**
 * What happens after an attempt: a pure function of the attempt's result, its number, the clock and
 * how long the endpoint has been failing. No I/O, so it is tested with plain values.
 * The schedule is Standard Webhooks' example one; disabling an endpoint after 5 days of failures is
 * Svix's rule.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Delay before attempt n+1 (index n-1 for attempt n): attempt 1 immediately, then 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h: ten attempts over ~75.6 h.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];
/** An endpoint failing this long without one success is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;
/** A receiver's Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;
/** Delays are spread by ±20 % so that a recovered endpoint is not hit by every retry at once. */
const JITTER = 0.2;

export type AttemptResult = { ok: true } | { ok: false; status: number | null; retryAfterMs: number | null };

export type Decision =
  { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'give_up' } | { kind: 'disable'; reason: 'gone' | 'failing' };

export type DecideInput = {
  result: AttemptResult;
  /** The number of the attempt just made (1 for the first). */
  attempt: number;
  now: Date;
  /** When the webhook's current run of failures began (null: it is healthy). */
  failingSince: Date | null;
  /** Overrides RETRY_SCHEDULE_MS (tests use milliseconds). schedule[0] is the first attempt's. */
  schedule?: readonly number[];
  /** Uniform [0, 1); injected for deterministic tests. */
  random?: () => number;
};

export function decide(input: DecideInput): Decision {
  const { result, attempt, now, failingSince } = input;
  if (result.ok) return { kind: 'delivered' };
  // 410 Gone: the receiver says the endpoint no longer exists (Standard Webhooks).
  if (result.status === 410) return { kind: 'disable', reason: 'gone' };
  if (failingSince && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS) {
    return { kind: 'disable', reason: 'failing' };
  }
  const schedule = input.schedule ?? RETRY_SCHEDULE_MS;
  if (attempt >= schedule.length) return { kind: 'give_up' };
  const base = schedule[attempt]!;
  const random = input.random ?? Math.random;
  let delay = base === 0 ? 0 : base * (1 - JITTER + 2 * JITTER * random());
  if (result.retryAfterMs !== null) delay = Math.max(delay, Math.min(result.retryAfterMs, MAX_RETRY_AFTER_MS));
  return { kind: 'retry', at: new Date(now.getTime() + Math.round(delay)) };
}

/** A Retry-After header (delay-seconds or an HTTP date) in milliseconds from `now`; null if absent or bad. */
export function parseRetryAfter(header: string | null | undefined, now: Date): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * SECOND;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
