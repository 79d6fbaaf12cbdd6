import type { Cluster, Redis } from 'ioredis';
import { AppError } from '../shared/errors.js';

/**
 * Per-caller request limits, applied to every procedure call (so each call of a tRPC batch counts).
 * A caller with a rate of N per second has a token bucket refilled at N tokens per second that holds
 * at most 3N (one second's worth plus a burst reserve of 2N), or a plan's burst; a call takes one token.
 *
 * With Redis the bucket lives there and tokens are taken by one atomic script, so a key's limit holds
 * across every web process. A Redis round trip per call would cost most of a cached answer's time,
 * so a process takes tokens in leases of a tenth of a second's worth and admits calls from its lease
 * without a round trip; a lease is dropped after LEASE_MS, so tokens taken for one moment are not
 * spent much later (what a lease may still hold when the bucket has refilled is at most a tenth of a
 * second's rate: the only slack over an exact bucket). Low limits get leases of one token, i.e. an
 * exact count per call. While Redis is unreachable each process keeps the same buckets in memory.
 */

export type RateLimitState = {
  /** Requests per second of the caller's policy. */
  limit: number;
  remaining: number;
  /** Seconds until the current window resets. */
  resetSeconds: number;
};

export type RateLimiter = {
  /**
   * Counts one request of `subject`; throws AppError TOO_MANY_REQUESTS when it is over its limit.
   * `capacity` is the bucket's size (a plan's burst); default BURST_SECONDS × perSecond.
   */
  consume(subject: string, perSecond: number, capacity?: number): Promise<RateLimitState>;
};

/** Bucket capacity in seconds of refill: N per second plus a burst reserve of 2N. */
export const BURST_SECONDS = 3;
/** How long a process may admit calls from tokens it took. */
const LEASE_MS = 100;
/** Leases hold this share of a second's rate. */
const LEASE_SHARE = LEASE_MS / 1000;

/**
 * Takes up to ARGV[3] tokens from the bucket at KEYS[1] (refill ARGV[1]/s, capacity ARGV[2]), by the
 * Redis server's clock so that processes' clocks need not agree. Returns the tokens granted and the
 * tokens left (as text: Lua numbers are truncated to integers in replies).
 */
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate / 1000)
local granted = math.min(want, math.floor(tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return {granted, tostring(tokens)}`;

type Take = { granted: number; left: number };

type Bucket = { tokens: number; at: number; rate: number; capacity: number };

/** Buckets in this process's memory (no Redis, or Redis unreachable). */
function memoryBuckets() {
  const buckets = new Map<string, Bucket>();
  let sweptAt = 0;
  return (subject: string, rate: number, capacity: number, want: number): Take => {
    const now = Date.now();
    const bucket = buckets.get(subject) ?? { tokens: capacity, at: now, rate, capacity };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) * rate) / 1000);
    bucket.at = now;
    const granted = Math.min(want, Math.floor(bucket.tokens));
    bucket.tokens -= granted;
    buckets.set(subject, bucket);
    // Keyless callers are counted per address: forget the buckets that have refilled to full (a
    // sweep at most once a second, so that a flood of addresses does not make every call a scan).
    if (buckets.size > 10_000 && now - sweptAt > 1000) {
      sweptAt = now;
      for (const [s, b] of buckets) if (b.tokens + ((now - b.at) * b.rate) / 1000 >= b.capacity) buckets.delete(s);
    }
    return { granted, left: bucket.tokens };
  };
}

type Lease = { tokens: number; left: number; expiresAt: number };

export function createRateLimiter(options: { redis?: Redis | Cluster; keyPrefix: string }): RateLimiter {
  const inMemory = memoryBuckets();
  const leases = new Map<string, Lease>();
  const taking = new Map<string, Promise<Take>>();
  const { redis } = options;
  redis?.defineCommand('opscanTakeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });

  async function take(subject: string, rate: number, capacity: number, want: number): Promise<Take> {
    if (!redis || redis.status !== 'ready') return inMemory(subject, rate, capacity, want);
    try {
      // `{subject}` is a hash tag: the bucket's one key stays on one Redis Cluster slot.
      const key = `${options.keyPrefix}rl:{${subject}}`;
      const [granted, left] = (await (redis as unknown as TakeCommand).opscanTakeTokens(key, rate, capacity, want)) as [number, string];
      return { granted, left: Number(left) };
    } catch {
      return inMemory(subject, rate, capacity, want);
    }
  }

  /**
   * Takes a lease of tokens for `subject` and installs it; concurrent callers of one subject share
   * one request (each then takes its token from the lease).
   */
  function refill(subject: string, limit: number, capacity: number): Promise<Take> {
    const running = taking.get(subject);
    if (running) return running;
    const want = Math.max(1, Math.min(capacity, Math.ceil(limit * LEASE_SHARE)));
    const started = take(subject, limit, capacity, want)
      .then((took) => {
        if (took.granted > 0) leases.set(subject, { tokens: took.granted, left: took.left, expiresAt: Date.now() + LEASE_MS });
        return took;
      })
      .finally(() => taking.delete(subject));
    taking.set(subject, started);
    return started;
  }

  /** One token from the subject's lease, or null when it has none left or has expired. */
  function fromLease(subject: string, limit: number): RateLimitState | null {
    const lease = leases.get(subject);
    if (!lease) return null;
    if (lease.tokens < 1 || Date.now() >= lease.expiresAt) {
      leases.delete(subject);
      return null;
    }
    lease.tokens--;
    // An emptied lease goes at once: keyless callers (one lease per address) must not pile up.
    if (lease.tokens < 1) leases.delete(subject);
    return { limit, remaining: Math.floor(lease.tokens + lease.left), resetSeconds: 1 };
  }

  return {
    async consume(caller, perSecond, capacity) {
      const limit = Math.max(1, Math.floor(perSecond));
      const size = Math.max(1, Math.floor(capacity ?? limit * BURST_SECONDS));
      // A changed rate or burst starts a bucket of its own.
      const subject = size === limit * BURST_SECONDS ? `${caller}:${limit}` : `${caller}:${limit}:${size}`;
      for (;;) {
        const admitted = fromLease(subject, limit);
        if (admitted) return admitted;
        // Others sharing the refill may take its tokens first: then this caller asks again.
        const { granted, left } = await refill(subject, limit, size);
        if (granted > 0) continue;
        const retryAfter = Math.max(1, Math.ceil((1 - left) / limit));
        throw new AppError(
          'TOO_MANY_REQUESTS',
          `Rate limit exceeded: ${limit} requests per second (plus a burst reserve). Retry in ${retryAfter} s.`,
          { meta: { retryAfter, limit } },
        );
      }
    },
  };
}

type TakeCommand = { opscanTakeTokens(key: string, rate: number, capacity: number, want: number): Promise<unknown> };
