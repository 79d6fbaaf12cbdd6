import type { WebConfig } from '../shared/config.js';
import type { Db } from '../shared/db/client.js';
import type { Logger } from '../shared/log.js';
import { createApiKeyCache, type ApiKeyCache } from './apiKeyCache.js';
import { createMemoryStore, createRedisStore } from './cache/cacheStore.js';
import { createResponseCache, type ResponseCache } from './cache/responseCache.js';
import { createChainReader, type ChainReader } from './chain/chainReader.js';
import { createIndexerView, type IndexerView } from './indexerView.js';
import { createPriceSource, type PriceSource } from './prices.js';
import { createRateLimiter, type RateLimiter } from './rateLimiter.js';
import { createRedis } from './redis.js';

/** The web process's long-lived helpers, built once (main.ts, or a test) and shared by every request. */
export type WebServices = {
  cache: ResponseCache;
  limiter: RateLimiter;
  indexer: IndexerView;
  apiKeys: ApiKeyCache;
  chain: ChainReader;
  prices: PriceSource;
  /**
   * Resolves once Redis is connected, or after `timeoutMs` (never rejects): until then the cache
   * misses and the limiter counts in memory, so a process waits for it before taking traffic.
   */
  ready(timeoutMs?: number): Promise<void>;
  /** Closes the Redis connection, if any. */
  close(): Promise<void>;
};

/** Size of the in-process near cache in front of Redis (characters of JSON). */
const NEAR_CACHE_CHARS = 32 * 1024 * 1024;

export function createWebServices(deps: { db: Db; config: WebConfig; log: Logger }): WebServices {
  const { config, log } = deps;
  const redis = config.REDIS_URL ? createRedis(config.REDIS_URL, log) : undefined;
  const cache = redis
    ? createResponseCache(createRedisStore(redis, `${config.REDIS_KEY_PREFIX}cache:`), log, createMemoryStore(NEAR_CACHE_CHARS))
    : createResponseCache(createMemoryStore(), log);
  return {
    cache,
    limiter: createRateLimiter({ redis, keyPrefix: config.REDIS_KEY_PREFIX }),
    indexer: createIndexerView(deps.db, config.networks, { log }),
    apiKeys: createApiKeyCache(),
    chain: createChainReader(),
    prices: createPriceSource(config.PRICE_SOURCE_URL, log),
    async ready(timeoutMs = 2000) {
      if (!redis || redis.status === 'ready') return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          redis!.off('ready', done);
          resolve();
        }
        redis.once('ready', done);
      });
    },
    async close() {
      redis?.disconnect();
    },
  };
}
