import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { Counter } from 'prom-client';
import { isDatabaseUnavailable } from '../../shared/db/client.js';
import type { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';

/** The level of an answered (under 400) request's access line. */
export type AccessLogLevel = 'info' | 'debug';

/** A request id the client may choose (tracing through its own logs); anything else is replaced. */
const CLIENT_REQUEST_ID = /^[\w-]{1,64}$/;

/** Paths polled by browsers (the status page) and probes: their successful answers are logged at debug level only. */
const QUIET_PATHS = /^\/(status\/|healthz$|readyz$|metrics$|v0\/getStatusSummary$|$)/;

/**
 * The path as logged: no query string (a key or webhook secret may travel in one), and the key
 * of the GraphQL path `/api/<key>/subgraphs/...` redacted.
 */
export function loggedPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.replace(/^\/api\/[^/]+\//, '/api/[redacted]/');
}

const outageAnswers = new Counter({
  name: 'opscan_http_database_unavailable_total',
  help: 'Requests answered 503 because the database was unreachable (each outage is logged once, these answers are not).',
});

/** Requests answered 503 because the database is away: their access lines are debug, not error. */
const answeredDuringOutage = new WeakSet<IncomingMessage>();

/**
 * Notes the error a request is answered with. A 503 for a database that is away is the outage's,
 * which the database client logs once when it starts and once when it ends
 * (shared/db/availability.ts): the answers are counted instead of each logged at error level
 * (hundreds of lines for a failover under load).
 */
export function noteErrorAnswer(req: IncomingMessage, error: AppError): void {
  if (error.code !== 'SERVICE_UNAVAILABLE' || !isDatabaseUnavailable(error.cause) || answeredDuringOutage.has(req)) return;
  answeredDuringOutage.add(req);
  outageAnswers.inc();
}

/**
 * One access-log line per request (pino-http): method, path, status, time, request id. Headers
 * are not logged (they carry keys and signatures). The request id is the client's `x-request-id`
 * when it is sane, else a new one; it is set on the request so every transport answers the same
 * id in its `x-request-id` header. An answer under 400 is logged at `answeredLevel` (the quiet
 * paths' at debug), a 4xx at info, a 5xx at error.
 */
export function accessLog(log: Logger, answeredLevel: AccessLogLevel = 'info'): RequestHandler {
  return pinoHttp<IncomingMessage, ServerResponse>({
    logger: log,
    genReqId(req, res) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
      req.headers['x-request-id'] = id;
      res.setHeader('x-request-id', id);
      return id;
    },
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: loggedPath(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel(req, res, err) {
      if (answeredDuringOutage.has(req)) return 'debug';
      if (err || res.statusCode >= 500) return 'error';
      if (res.statusCode < 400) return QUIET_PATHS.test(loggedPath(req.url ?? '')) ? 'debug' : answeredLevel;
      return 'info';
    },
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
}
