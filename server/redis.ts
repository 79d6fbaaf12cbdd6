import { Redis } from 'ioredis';
import type { Logger } from '../shared/log.js';

/**
 * The web process's Redis connection (cache and rate limiter). It fails fast instead of queueing:
 * with the offline queue off and a short command timeout, a Redis outage turns every command into
 * an immediate error, which the cache treats as a miss and the limiter hands to its in-memory
 * insurance, so callers keep getting answers from Postgres. It reconnects in the background.
 */
export function createRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    // Commands issued in the same tick (a rate-limit check and a cache read) share one write.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 1000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    // Managed Redis (Heroku Key-Value Store) serves TLS with a self-signed certificate.
    ...(url.startsWith('rediss://') ? { tls: { rejectUnauthorized: false } } : {}),
  });
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    // One line per 10 s at most: an outage must not flood the log.
    if (Date.now() - lastLogged > 10_000) {
      lastLogged = Date.now();
      log.warn({ err: err.message }, 'redis unavailable; serving from postgres');
    }
  });
  return redis;
}
