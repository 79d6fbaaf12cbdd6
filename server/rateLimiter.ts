import type { Redis } from 'ioredis';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../shared/errors.js';

/**
 * Per-caller request limits, applied to every procedure call (so each call of a tRPC batch counts).
 * A caller with a rate of N per second gets N per 1 s window plus a burst reserve of 2N per 10 s:
 * a token bucket refilled at N/s whose capacity is about 3N, built from rate-limiter-flexible's
 * BurstyRateLimiter. With Redis the counters are shared by every web process; each Redis limiter
 * has an in-memory insurance limiter that takes over while Redis is unreachable.
 */

export type RateLimitState = {
  /** Requests per second of the caller's policy. */
  limit: number;
  remaining: number;
  /** Seconds until the current window resets. */
  resetSeconds: number;
};

export type RateLimiter = {
  /** Counts one request of `subject`; throws AppError TOO_MANY_REQUESTS when it is over its limit. */
  consume(subject: string, perSecond: number): Promise<RateLimitState>;
};

const BURST_WINDOW_SECONDS = 10;
const BURST_FACTOR = 2;

export function createRateLimiter(options: { redis?: Redis; keyPrefix: string }): RateLimiter {
  const byRate = new Map<number, BurstyRateLimiter>();

  const limiterFor = (points: number, duration: number, name: string) => {
    const keyPrefix = `${options.keyPrefix}rl:${name}:${points}`;
    const memory = new RateLimiterMemory({ points, duration, keyPrefix });
    if (!options.redis) return memory;
    return new RateLimiterRedis({
      storeClient: options.redis,
      points,
      duration,
      keyPrefix,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  };

  const bucketFor = (perSecond: number): BurstyRateLimiter => {
    let bucket = byRate.get(perSecond);
    if (!bucket) {
      bucket = new BurstyRateLimiter(
        limiterFor(perSecond, 1, 'rate'),
        limiterFor(perSecond * BURST_FACTOR, BURST_WINDOW_SECONDS, 'burst'),
      );
      byRate.set(perSecond, bucket);
    }
    return bucket;
  };

  return {
    async consume(subject, perSecond) {
      const limit = Math.max(1, Math.floor(perSecond));
      try {
        const res = await bucketFor(limit).consume(subject);
        return { limit, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new AppError(
          'TOO_MANY_REQUESTS',
          `Rate limit exceeded: ${limit} requests per second (plus a burst reserve). Retry in ${retryAfter} s.`,
          { meta: { retryAfter, limit } },
        );
      }
    },
  };
}
