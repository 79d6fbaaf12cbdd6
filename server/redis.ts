import { Cluster, Redis } from 'ioredis';
import type { Logger } from '../shared/log.js';

/** The web process's Redis: one server, or a Redis Cluster (the same commands, routed by key slot). */
export type RedisClient = Redis | Cluster;

/** Fail fast instead of queueing: see createRedis. */
const FAIL_FAST = {
  maxRetriesPerRequest: 0,
  commandTimeout: 250,
  connectTimeout: 1000,
  retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
};

/**
 * The seed nodes of a cluster URL: `redis-cluster://[user:pass@]host:port,host:port` (TLS with
 * `rediss-cluster://`), or with REDIS_CLUSTER=true a `redis://` URL or a comma list of them.
 * Null: `url` names one server.
 */
export function clusterSeeds(
  url: string,
  cluster = false,
): { nodes: Array<{ host: string; port: number }>; username?: string; password?: string; tls: boolean } | null {
  const named = /^(rediss?)-cluster:\/\//.exec(url);
  if (!named && !cluster) return null;
  const tls = named ? named[1] === 'rediss' : url.startsWith('rediss://');
  const entries = named
    ? url
        .slice(named[0].length)
        .split(',')
        .map((hostPort, i) => new URL(`redis://${i === 0 ? '' : authOf(url)}${hostPort.trim()}`))
    : url.split(',').map((u) => new URL(u.trim()));
  const first = entries[0]!;
  return {
    nodes: entries.map((u) => ({ host: u.hostname, port: Number(u.port || 6379) })),
    username: first.username ? decodeURIComponent(first.username) : undefined,
    password: first.password ? decodeURIComponent(first.password) : undefined,
    tls,
  };
}

/** The `user:pass@` part of a cluster URL (it precedes the first seed only). */
function authOf(url: string): string {
  const at = /^[a-z-]+:\/\/([^@/,]*@)/.exec(url);
  return at ? at[1]! : '';
}

/**
 * The web process's Redis connection (cache and rate limiter). It fails fast instead of queueing:
 * with the offline queue off and a short command timeout, a Redis outage turns every command into
 * an immediate error, which the cache treats as a miss and the limiter hands to its in-memory
 * insurance, so callers keep getting answers from Postgres. It reconnects in the background.
 *
 * On a Redis Cluster every command opscan sends touches one key (the rate limiter's bucket key is
 * hash-tagged, the cache's commands are single-key), so each goes to the node owning its slot; when
 * a master fails, the commands for its slots fail fast (misses, in-memory limits) until a replica
 * takes over or it returns, and the client refreshes its slot map on its own.
 */
export function createRedis(url: string, log: Logger, options: { cluster?: boolean } = {}): RedisClient {
  const seeds = clusterSeeds(url, options.cluster);
  // Managed Redis (Heroku Key-Value Store) serves TLS with a self-signed certificate.
  const tls = (seeds ? seeds.tls : url.startsWith('rediss://')) ? { tls: { rejectUnauthorized: false } } : {};
  const redis: RedisClient = seeds
    ? new Cluster(seeds.nodes, {
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        clusterRetryStrategy: FAIL_FAST.retryStrategy,
        // A MOVED/ASK answer or a failover: retry briefly, then fail (a miss) rather than wait.
        maxRedirections: 4,
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 100,
        slotsRefreshTimeout: 1000,
        slotsRefreshInterval: 5000,
        redisOptions: { ...FAIL_FAST, username: seeds.username, password: seeds.password, ...tls },
      })
    : new Redis(url, {
        enableOfflineQueue: false,
        // Commands issued in the same tick (a rate-limit check and a cache read) share one write.
        enableAutoPipelining: true,
        ...FAIL_FAST,
        ...tls,
      });
  let lastLogged = 0;
  const onError = (err: Error) => {
    // One line per 10 s at most: an outage must not flood the log.
    if (Date.now() - lastLogged > 10_000) {
      lastLogged = Date.now();
      log.warn({ err: err.message }, 'redis unavailable; serving from postgres');
    }
  };
  redis.on('error', onError);
  if (seeds) redis.on('node error', onError);
  return redis;
}
