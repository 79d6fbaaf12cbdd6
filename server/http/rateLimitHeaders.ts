import { AppError } from '../../shared/errors.js';
import type { RateLimitState } from '../rateLimiter.js';

const policy = (limit: unknown, name = 'default', windowSeconds = 1) => `"${name}";q=${String(limit)};w=${windowSeconds}`;

/** The policy names of a plan's quotas (server/quotas.ts) in the headers. */
const QUOTA_POLICIES: Record<string, string> = { requestsPerDay: 'daily', requestsPerMonth: 'monthly' };

/**
 * The IETF draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) for the caller's standing
 * after its call, plus Retry-After when the call was refused (the limiter's AppError carries
 * `retryAfter` and `limit`; a plan's quota's also `quota` and `windowSeconds`). Both transports send them.
 */
export function rateLimitHeaders(state: RateLimitState | null, error?: unknown): Record<string, string> {
  if (error instanceof AppError && error.code === 'TOO_MANY_REQUESTS') {
    const { retryAfter, limit, quota, windowSeconds } = error.meta as {
      retryAfter: number;
      limit: number;
      quota?: string;
      windowSeconds?: number;
    };
    // A spent quota is its own policy, its window the UTC day or month; t = seconds until it resets.
    const name = (quota && QUOTA_POLICIES[quota]) ?? 'default';
    return {
      'ratelimit-policy': policy(limit, name, windowSeconds),
      ratelimit: `"${name}";r=0;t=${retryAfter}`,
      'retry-after': String(retryAfter),
    };
  }
  if (!state) return {};
  return { 'ratelimit-policy': policy(state.limit), ratelimit: `"default";r=${state.remaining};t=${state.resetSeconds}` };
}
