import express, { type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { createContext, type Deps, type RequestHeaders } from '../context.js';
import { answerEndpoint, endpoints, type EndpointName } from '../endpoints/index.js';
import type { Endpoint } from '../endpoints/defineEndpoint.js';
import { answerText } from '../endpoints/runEndpoint.js';
import { rateLimitHeaders } from '../http/rateLimitHeaders.js';

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
  return createContext(deps, { requestId: requestIdOf(req), headers: headersOf(req), clientIp: req.ip ?? 'unknown' });
}

/**
 * Mounts every endpoint at `/<name>` for its methods; the input is the query string (and a JSON
 * body on POST). A cached answer is written as the stored JSON text, without a parse.
 */
export function createRestRouter(deps: Deps): express.Router {
  const router = express.Router();
  for (const name of Object.keys(endpoints) as EndpointName[]) {
    const endpoint = endpoints[name] as unknown as Endpoint;
    for (const method of endpoint.methods ?? ['GET']) {
      const route = router.route(`/${name}`);
      const handle = async (req: Request, res: Response) => {
        const ctx = contextOf(deps, req);
        res.set('x-request-id', ctx.requestId);
        const body = method === 'POST' && req.body && typeof req.body === 'object' ? req.body : {};
        try {
          const answer = await answerEndpoint(ctx, name, { ...req.query, ...body });
          res.set(rateLimitHeaders(ctx.rateLimit));
          // Private: a shared cache would let callers bypass their per-key rate limit.
          res.set('cache-control', answer.cache === 'none' ? 'no-store' : `private, max-age=${Math.min(answer.maxAgeSeconds, 60)}`);
          if (answer.cache !== 'none') res.set('x-cache', answer.cache);
          res.type('application/json').send(answerText(answer));
        } catch (error) {
          res.set(rateLimitHeaders(ctx.rateLimit, error));
          throw error;
        }
      };
      if (method === 'GET') route.get(handle);
      else if (method === 'POST') route.post(handle);
      else route.delete(handle);
    }
  }
  return router;
}
