import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../shared/log.js';

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

/**
 * One access-log line per request (pino-http): method, path, status, time, request id. Headers
 * are not logged (they carry keys and signatures). The request id is the client's `x-request-id`
 * when it is sane, else a new one; it is set on the request so every transport answers the same
 * id in its `x-request-id` header.
 */
export function accessLog(log: Logger): RequestHandler {
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
      if (err || res.statusCode >= 500) return 'error';
      if (res.statusCode < 400 && QUIET_PATHS.test(loggedPath(req.url ?? ''))) return 'debug';
      return 'info';
    },
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
}
