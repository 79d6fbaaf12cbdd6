import type { WebConfig } from '../shared/config.js';
import { ANSWER_GRACE_MS, type Db } from '../shared/db/client.js';
import type { Logger } from '../shared/log.js';
import { createApiKeyCache, type ApiKeyCache } from './apiKeyCache.js';
import { createMemoryStore, createRedisStore } from './cache/cacheStore.js';
import { createResponseCache, type ResponseCache } from './cache/responseCache.js';
import { createChainReader, type ChainReader } from './chain/chainReader.js';
import * as indexerState from '../shared/db/tables/indexerState.js';
import { createIndexerView, type IndexerView } from './indexerView.js';
import { createPriceSource, type PriceSource } from './prices.js';
import { createQuotaCounter, type QuotaCounter } from './quotas.js';
import { createRateLimiter, type RateLimiter } from './rateLimiter.js';
import { createReadReplicas, type ReadReplicas } from './readReplicas.js';
import { createRedis } from './redis.js';
import { createUsageMeter, type UsageMeter } from './usageMeter.js';
import { API_KEYS_CHANNEL } from '../shared/db/tables/apiKeys.js';

/** The web process's long-lived helpers, built once (main.ts, or a test) and shared by every request. */
export type WebServices = {
  cache: ResponseCache;
  limiter: RateLimiter;
  /** Plans' daily and monthly quotas (server/quotas.ts). */
  quotas: QuotaCounter;
  /** Calls made with a key, counted in memory and flushed to api_key_usage in batches. */
  usage: UsageMeter;
  /** The primary's indexer view (see readReplicas for the replicas' own). */
  indexer: IndexerView;
  /** The read replicas of DATABASE_READ_URL; null without them (every read goes to the primary). */
  readReplicas: ReadReplicas | null;
  apiKeys: ApiKeyCache;
  chain: ChainReader;
  prices: PriceSource;
  /**
   * Resolves once Redis is connected and the read replicas' first check is done, or after
   * `timeoutMs` (never rejects): until then the cache misses, the limiter counts in memory and reads
   * go to the primary, so a process waits for it before taking traffic.
   */
  ready(timeoutMs?: number): Promise<void>;
  /** Writes the usage counted so far, stops listening for key changes, closes Redis and the replicas' pools. */
  close(): Promise<void>;
};

/**
 * The web's statement timeout (server/main.ts), on the replicas too: a request's reads are short, and
 * one the database cannot answer by then is answered 503 rather than held open. DB_STATEMENT_TIMEOUT_MS
 * may lower it.
 */
export function webStatementTimeoutMs(config: Pick<WebConfig, 'DB_STATEMENT_TIMEOUT_MS'>): number {
  return Math.min(5_000, config.DB_STATEMENT_TIMEOUT_MS || Infinity);
}

/**
 * One request's budget for all its database work, counted from its arrival (server/context.ts): as
 * long as one statement may go unanswered before the database counts as not answering (the
 * statement timeout and the grace after it). Its waits in turn (the indexer state, a connection, each
 * statement) share it, so a request the database cannot answer is answered 503 by then, however
 * many it makes.
 */
export function webDatabaseBudgetMs(config: Pick<WebConfig, 'DB_STATEMENT_TIMEOUT_MS'>): number {
  return webStatementTimeoutMs(config) + ANSWER_GRACE_MS;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Size of the in-process near cache in front of Redis (characters of JSON). */
const NEAR_CACHE_CHARS = 32 * 1024 * 1024;

export function createWebServices(deps: { db: Db; config: WebConfig; log: Logger }): WebServices {
  const { config, log } = deps;
  const redis = config.REDIS_URL ? createRedis(config.REDIS_URL, log, { cluster: config.REDIS_CLUSTER }) : undefined;
  const cache = redis
    ? createResponseCache(createRedisStore(redis, `${config.REDIS_KEY_PREFIX}cache:`), log, createMemoryStore(NEAR_CACHE_CHARS))
    : createResponseCache(createMemoryStore(), log);
  const readReplicas = config.DATABASE_READ_URL
    ? createReadReplicas(config.DATABASE_READ_URL, {
        networks: config.networks,
        maxLagSeconds: config.READ_REPLICA_MAX_LAG_SECONDS,
        statementTimeoutMs: webStatementTimeoutMs(config),
        log,
      })
    : null;
  const indexer = createIndexerView(deps.db, config.networks, { log });
  // The indexer NOTIFYs each cursor move as it commits: the next request reads where it stands (on
  // the replicas too, which replay it within milliseconds) rather than up to a second later.
  const unlistenIndexed = deps.db
    .listen(indexerState.INDEXED_CHANNEL, () => {
      indexer.invalidate();
      for (const replica of readReplicas?.replicas ?? []) replica.indexer.invalidate();
    })
    .catch((err: unknown) => {
      log.warn({ err }, 'cannot LISTEN for indexer moves; reading indexer_state on a timer only');
      return null;
    });
  const apiKeys = createApiKeyCache();
  // A key or plan changed somewhere (the admin API, the CLI): forget it at once. '' also comes after
  // a lost connection (notifications may have been missed): forget everything.
  const unlistenApiKeys = deps.db
    .listen(API_KEYS_CHANNEL, (keyId) => apiKeys.forget(keyId))
    .catch((err: unknown) => {
      log.warn({ err }, 'cannot listen for API key changes; remembered keys expire by their TTL only');
      return null;
    });
  const usage = createUsageMeter({
    db: deps.db,
    log,
    enabled: config.USAGE_METERING === 'on',
    flushIntervalMs: config.USAGE_FLUSH_INTERVAL_MS,
    retentionDays: config.USAGE_RETENTION_DAYS,
  });
  let closing: Promise<void> | undefined;
  return {
    cache,
    limiter: createRateLimiter({ redis, keyPrefix: config.REDIS_KEY_PREFIX }),
    quotas: createQuotaCounter({ redis, keyPrefix: config.REDIS_KEY_PREFIX }),
    usage,
    indexer,
    readReplicas,
    apiKeys,
    chain: createChainReader(),
    prices: createPriceSource(config.PRICE_SOURCE_URL, log),
    async ready(timeoutMs = 2000) {
      await Promise.all([unlistenApiKeys, unlistenIndexed]);
      const checked = readReplicas ? Promise.race([readReplicas.check(), sleep(timeoutMs)]) : undefined;
      await checked;
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
    close() {
      closing ??= (async () => {
        await usage.close();
        await (
          await unlistenApiKeys
        )?.();
        await (
          await unlistenIndexed
        )?.();
        redis?.disconnect();
        await readReplicas?.close();
      })();
      return closing;
    },
  };
}
