import express, { type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { createContext, type Deps, type RequestHeaders } from '../context.js';
import { answerEndpoint, endpoints, type EndpointName } from '../endpoints/index.js';
import type { Endpoint } from '../endpoints/defineEndpoint.js';
import { answerJson } from '../endpoints/runEndpoint.js';
import { rateLimitHeaders } from '../http/rateLimitHeaders.js';
import type { Dialect } from '../dialects/dialect.js';

export function headersOf(req: Request): RequestHeaders {
  const apiKey = req.get('x-api-key');
  return { apiKey: apiKey || undefined, authorization: req.get('authorization') || undefined };
}

export function requestIdOf(req: Request): string {
  const given = req.get('x-request-id');
  return given && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
}

/** The context of one HTTP request (REST call or tRPC batch). */
export function contextOf(deps: Deps, req: Request) {
  return createContext(deps, { requestId: requestIdOf(req), headers: headersOf(req), clientIp: () => req.ip ?? 'unknown' });
}

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * Serves every endpoint at `/<name>` (any case, as Express routes are) for its methods, answered in
 * `dialect`'s shapes; the input is the query string (and a JSON body on POST). One route looks the name up in a map, rather than one
 * route per endpoint tried in turn. A cached answer is written as the stored JSON bytes, without a parse.
 */
export function createRestRouter(deps: Deps, dialect: Dialect): express.Router {
  const byName = new Map<string, { name: EndpointName; methods: ReadonlyArray<Method> }>();
  for (const name of Object.keys(endpoints) as EndpointName[]) {
    const endpoint: Endpoint = endpoints[name];
    byName.set(name.toLowerCase(), { name, methods: endpoint.methods ?? ['GET'] });
  }
  const router = express.Router();
  router.all('/:name', async (req: Request, res: Response, next) => {
    const method = (req.method === 'HEAD' ? 'GET' : req.method) as Method;
    const found = byName.get(String(req.params.name).toLowerCase());
    if (!found || !found.methods.includes(method)) return next();
    const ctx = contextOf(deps, req);
    res.setHeader('x-request-id', ctx.requestId);
    const body: unknown = method === 'POST' && req.body && typeof req.body === 'object' ? req.body : undefined;
    try {
      const answer = await answerEndpoint(
        ctx,
        found.name,
        body ? { ...req.query, ...(body as Record<string, unknown>) } : req.query,
        dialect,
      );
      const json = answerJson(answer);
      // Written directly (this is the hot path): JSON, no ETag, HEAD without a body.
      res.statusCode = 200;
      for (const [header, value] of Object.entries(rateLimitHeaders(ctx.rateLimit))) res.setHeader(header, value);
      // Private: a shared cache would let callers bypass their per-key rate limit.
      res.setHeader('cache-control', answer.cache === 'none' ? 'no-store' : `private, max-age=${Math.min(answer.maxAgeSeconds, 60)}`);
      if (answer.cache !== 'none') res.setHeader('x-cache', answer.cache);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('content-length', json.length);
      res.end(req.method === 'HEAD' ? undefined : json);
    } catch (error) {
      res.set(rateLimitHeaders(ctx.rateLimit, error));
      throw error;
    }
  });
  return router;
}
