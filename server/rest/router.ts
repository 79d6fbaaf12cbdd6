import express, { type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { createContext, type Deps, type RequestHeaders } from '../context.js';
import { callEndpoint, endpoints, type EndpointName } from '../endpoints/index.js';
import type { Endpoint } from '../endpoints/defineEndpoint.js';

export function headersOf(req: Request): RequestHeaders {
  const apiKey = req.get('x-api-key');
  return { apiKey: apiKey || undefined, authorization: req.get('authorization') || undefined };
}

export function requestIdOf(req: Request): string {
  const given = req.get('x-request-id');
  return given && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
}

/** Mounts every endpoint at `/<name>` for its methods; the input is the query string (and a JSON body on POST). */
export function createRestRouter(deps: Deps): express.Router {
  const router = express.Router();
  for (const name of Object.keys(endpoints) as EndpointName[]) {
    const endpoint = endpoints[name] as unknown as Endpoint;
    for (const method of endpoint.methods ?? ['GET']) {
      const route = router.route(`/${name}`);
      const handle = async (req: Request, res: Response) => {
        const requestId = requestIdOf(req);
        res.set('x-request-id', requestId);
        const body = method === 'POST' && req.body && typeof req.body === 'object' ? req.body : {};
        const ctx = createContext(deps, { requestId, headers: headersOf(req) });
        res.json(await callEndpoint(ctx, name, { ...req.query, ...body }));
      };
      if (method === 'GET') route.get(handle);
      else if (method === 'POST') route.post(handle);
      else route.delete(handle);
    }
  }
  return router;
}
