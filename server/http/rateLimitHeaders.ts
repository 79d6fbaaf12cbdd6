import { AppError } from '../../shared/errors.js';
import type { RateLimitState } from '../rateLimiter.js';

const policy = (limit: unknown) => `"default";q=${String(limit)};w=1`;

/**
 * The IETF draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) for the caller's standing
 * after its call, plus Retry-After when the call was refused (the limiter's AppError carries
 * `retryAfter` and `limit`). Both transports send them.
 */
export function rateLimitHeaders(state: RateLimitState | null, error?: unknown): Record<string, string> {
  if (error instanceof AppError && error.code === 'TOO_MANY_REQUESTS') {
    const { retryAfter, limit } = error.meta as { retryAfter: number; limit: number };
    return { 'ratelimit-policy': policy(limit), ratelimit: `"default";r=0;t=${retryAfter}`, 'retry-after': String(retryAfter) };
  }
  if (!state) return {};
  return { 'ratelimit-policy': policy(state.limit), ratelimit: `"default";r=${state.remaining};t=${state.resetSeconds}` };
}
