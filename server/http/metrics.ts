import type { RequestHandler } from 'express';
import type { Deps } from '../context.js';

/**
 * GET /metrics in the Prometheus text format: the response cache's counters (per process). With
 * METRICS_TOKEN set it requires `Authorization: Bearer <token>`.
 */
export function createMetricsRoute(deps: Deps): RequestHandler {
  return (req, res) => {
    const token = deps.config.METRICS_TOKEN;
    if (token && req.get('authorization') !== `Bearer ${token}`) {
      res.status(401).json({ message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', code: 'UNAUTHORIZED' });
      return;
    }
    const { cache } = deps.services;
    const lines = [
      '# HELP opscan_cache_requests_total Cacheable answers by outcome (stale: written under an older reorg epoch).',
      '# TYPE opscan_cache_requests_total counter',
      `opscan_cache_requests_total{store="${cache.kind}",outcome="hit"} ${cache.stats.hits}`,
      `opscan_cache_requests_total{store="${cache.kind}",outcome="miss"} ${cache.stats.misses}`,
      `opscan_cache_requests_total{store="${cache.kind}",outcome="stale"} ${cache.stats.stale}`,
      '# HELP opscan_cache_errors_total Cache store failures (each answered from Postgres).',
      '# TYPE opscan_cache_errors_total counter',
      `opscan_cache_errors_total{store="${cache.kind}"} ${cache.stats.errors}`,
    ];
    res.type('text/plain; version=0.0.4').send(`${lines.join('\n')}\n`);
  };
}
