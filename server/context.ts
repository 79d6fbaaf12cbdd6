import type { Db } from '../shared/db/client.js';
import type { ApiKey } from '../shared/db/tables/apiKeys.js';
import type { WebConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import type { RateLimitState } from './rateLimiter.js';
import { webDatabaseBudgetMs, type WebServices } from './services.js';
import type { AccessLogLevel } from './http/accessLog.js';

/** What the web process is built from; created once in main.ts (or by a test). */
export type Deps = {
  db: Db;
  config: WebConfig;
  log: Logger;
  /** Cache, rate limiter, indexer view, chain reads, prices: built once by createWebServices. */
  services: WebServices;
  /** Level of an answered request's access line: info (default), debug under `npm start`, whose terminal a person reads. */
  accessLogLevel?: AccessLogLevel;
};

/** The request headers that matter to endpoints (transport-neutral). */
export type RequestHeaders = {
  apiKey?: string;
  authorization?: string;
};

/**
 * What an endpoint handler may touch. It never sees Express or tRPC objects: both transports
 * build a Ctx and call the same endpoint (server/endpoints/index.ts).
 */
export type Ctx = Deps & {
  /**
   * The primary database. `db` is where the endpoint's reads go: a read replica when the endpoint
   * reads from replicas (server/readReplicas.ts), so a handler that also writes writes here.
   */
  primary: Db;
  requestId: string;
  headers: RequestHeaders;
  /** The caller's address (rate limits of keyless endpoints); resolved on demand, behind TRUST_PROXY hops. */
  clientIp: () => string;
  /** The caller's key once authenticated (set by callEndpoint for endpoints that need one). */
  apiKey: ApiKey | null;
  /** The caller's rate-limit standing after its latest call (for the RateLimit headers). */
  rateLimit: RateLimitState | null;
  /**
   * When the request's database work must be done by (epoch ms): its arrival and the web's database
   * budget. Each transport runs the request's work under it (withDeadline, shared/db/deadline.ts).
   */
  deadline: number;
};

export function createContext(deps: Deps, request: { requestId: string; headers: RequestHeaders; clientIp?: () => string }): Ctx {
  const deadline = Date.now() + webDatabaseBudgetMs(deps.config);
  return { ...deps, primary: deps.db, clientIp: () => 'unknown', ...request, apiKey: null, rateLimit: null, deadline };
}
