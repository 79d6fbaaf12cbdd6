import type { RequestHandler } from 'express';
import { Counter, Histogram } from 'prom-client';
import { collectProcessMetrics, probe } from '../../shared/opsServer.js';
import type { ResponseCache } from '../cache/responseCache.js';
import type { Deps } from '../context.js';
import { endpoints } from '../endpoints/index.js';

/**
 * The web process's Prometheus metrics (prom-client's default registry): requests by endpoint and
 * status with their latency, the response cache's outcomes, rate-limit refusals. GET /metrics
 * serves the registry (with METRICS_TOKEN set it requires `Authorization: Bearer <token>`); under
 * `npm start` the indexer's and dispatcher's metrics are in the same registry.
 */

const requests = new Counter({
  name: 'opscan_http_requests_total',
  help: 'HTTP requests answered, by endpoint (the /v0 or tRPC procedure name, else the route group), method and status.',
  labelNames: ['endpoint', 'method', 'status'],
});
const latency = new Histogram({
  name: 'opscan_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by endpoint, method and status.',
  labelNames: ['endpoint', 'method', 'status'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});
const refusals = new Counter({
  name: 'opscan_rate_limit_refusals_total',
  help: 'Requests refused with 429 because the caller (key or address) was over its rate limit.',
  labelNames: ['endpoint'],
});

/** The cache whose counters the scrape in progress reports: the app's that answers it. */
let scrapedCache: ResponseCache | null = null;
new Counter({
  name: 'opscan_cache_requests_total',
  help: 'Cacheable answers by outcome (stale: written under an older reorg epoch).',
  labelNames: ['store', 'outcome'],
  collect() {
    this.reset();
    if (!scrapedCache) return;
    const { kind: store, stats } = scrapedCache;
    this.inc({ store, outcome: 'hit' }, stats.hits);
    this.inc({ store, outcome: 'miss' }, stats.misses);
    this.inc({ store, outcome: 'stale' }, stats.stale);
  },
});
new Counter({
  name: 'opscan_cache_errors_total',
  help: 'Cache store failures (each answered from Postgres).',
  labelNames: ['store'],
  collect() {
    this.reset();
    if (scrapedCache) this.inc({ store: scrapedCache.kind }, scrapedCache.stats.errors);
  },
});

const endpointNames = new Map(Object.keys(endpoints).map((name) => [name.toLowerCase(), name]));

/** A bounded label for a request path: endpoint names, never raw paths (no unbounded series). */
export function endpointLabel(path: string): string {
  const rest = /^\/(?:jiffyscan\/)?v0\/([^/]+)$/.exec(path);
  if (rest) return endpointNames.get(rest[1]!.toLowerCase()) ?? 'unknown';
  const trpc = /^\/trpc\/([^/]+)$/.exec(path);
  if (trpc) return endpointNames.get(trpc[1]!.toLowerCase()) ?? 'trpc';
  if (/\/subgraphs\//.test(path)) return 'graphql';
  if (path === '/' || path.startsWith('/status/')) return 'status';
  if (path.startsWith('/docs') || path.endsWith('openapi.json')) return 'docs';
  if (['/metrics', '/healthz', '/readyz'].includes(path)) return path.slice(1);
  return 'other';
}

/** Counts and times every request once its answer is written. */
export const requestMetrics: RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const endpoint = endpointLabel(req.originalUrl.split('?')[0] ?? '');
    const labels = { endpoint, method: req.method, status: String(res.statusCode) };
    requests.inc(labels);
    latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    if (res.statusCode === 429) refusals.inc({ endpoint });
  });
  next();
};

/** GET /metrics, /healthz and /readyz of the web process (shared/opsServer.ts answers them). */
export function createOpsRoutes(deps: Deps): RequestHandler {
  collectProcessMetrics();
  return async (req, res, next) => {
    if (req.path === '/metrics') scrapedCache = deps.services.cache;
    const answer = await probe(req.path, { db: deps.db, metricsToken: deps.config.METRICS_TOKEN, authorization: req.get('authorization') });
    if (!answer) return next();
    res.status(answer.status).type(answer.contentType).send(answer.body);
  };
}
