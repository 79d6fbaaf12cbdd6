import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * When REDIS_URL is set, each test file gets its own key prefix on the real Redis (and its keys
 * are deleted afterwards); otherwise tests run with the in-process cache and limiter.
 */
export const TEST_REDIS_URL = process.env.REDIS_URL || undefined;

/** Deletes every key under `prefix` (a test file's, a benchmark run's) on the Redis at `url`. */
export async function deleteRedisPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export function useTestRedis(): { readonly url: string | undefined; readonly prefix: string } {
  const prefix = `opscan_t_${randomBytes(4).toString('hex')}:`;
  after(async () => {
    if (TEST_REDIS_URL) await deleteRedisPrefix(TEST_REDIS_URL, prefix);
  });
  return { url: TEST_REDIS_URL, prefix };
}
