import cors from 'cors';
import express from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import { AppError } from '../shared/errors.js';
import type { Deps } from './context.js';
import { ADMIN_BASE_PATH } from './admin/openapi.js';
import { createAdminRouter } from './admin/routes.js';
import { createErrorHandler } from './http/errorHandler.js';
import { createDocsRouter } from './http/docs.js';
import { createSubgraphRoutes } from './graphql/routes.js';
import { accessLog, noteErrorAnswer } from './http/accessLog.js';
import { createOpsRoutes, requestMetrics } from './http/metrics.js';
import { createStatusPage } from './status/statusPage.js';
import { rateLimitHeaders } from './http/rateLimitHeaders.js';
import { errorHeaders, toAppError } from './http/errors.js';
import { bodySizeGuard, MAX_BODY_BYTES, MAX_TRPC_BATCH, refuseDeepJson, trpcRequestGuard } from './http/requestGuards.js';
import { contextOf, createRestRouter } from './rest/router.js';
import { appRouter } from './trpc/router.js';
import { createRpcRouter } from './rpc/routes.js';
import { jiffyscanDialect } from './dialects/jiffyscan.js';
import { specDialect } from './dialects/spec.js';

const EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy', 'x-cache'];

/** Browsers call the API from other origins with a custom header; preflight needs no key. */
const preflight = cors({
  origin: '*',
  methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['x-api-key', 'content-type', 'authorization', 'accept', 'x-request-id'],
  exposedHeaders: EXPOSED_HEADERS,
  maxAge: 86400,
});

/** Any origin may read the answers: the two CORS headers of a simple request are constant. */
const corsMiddleware: express.RequestHandler = (req, res, next) => {
  if (req.method === 'OPTIONS') return preflight(req, res, next);
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS.join(','));
  next();
};

/** Only POST, PATCH and DELETE carry a body (webhook, tRPC and admin mutations); nesting is bounded before parsing. */
const jsonBody = express.json({ limit: MAX_BODY_BYTES, verify: refuseDeepJson });
const jsonBodyParser: express.RequestHandler = (req, res, next) =>
  req.method === 'POST' || req.method === 'PATCH' || req.method === 'DELETE' ? jsonBody(req, res, next) : next();

const isRateLimited = (e: unknown) => e instanceof AppError && e.code === 'TOO_MANY_REQUESTS';

/** Assembles the web app; never listens (supertest drives it directly). */
export function createApp(deps: Deps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Answers carry Cache-Control; hashing every body for an ETag would cost more than it saves.
  app.set('etag', false);
  // Behind N proxies the client address (rate limits of keyless calls) is N hops back.
  app.set('trust proxy', deps.config.TRUST_PROXY);
  app.use(accessLog(deps.log, deps.accessLogLevel));
  app.use(requestMetrics);
  app.use(corsMiddleware);
  app.use(bodySizeGuard);
  // The ERC-4337 RPC reads its own body: JSON-RPC answers a body that is not JSON with its own error.
  app.use('/rpc', createRpcRouter(deps));
  app.use(jsonBodyParser);

  app.use('/v0', createRestRouter(deps, specDialect));
  // The live JiffyScan API's shapes, for its existing clients (server/dialects/jiffyscan.ts).
  app.use(jiffyscanDialect.basePath, createRestRouter(deps, jiffyscanDialect));
  app.use(
    '/trpc',
    trpcRequestGuard,
    createExpressMiddleware({
      router: appRouter,
      createContext: ({ req }) => contextOf(deps, req),
      maxBatchSize: MAX_TRPC_BATCH,
      responseMeta: ({ ctx, errors }) => {
        const causes = errors.map((e) => e.cause);
        const unavailable = causes.find((c): c is AppError => c instanceof AppError && c.code === 'SERVICE_UNAVAILABLE');
        return {
          headers: {
            ...rateLimitHeaders(ctx?.rateLimit ?? null, causes.find(isRateLimited)),
            ...(unavailable ? errorHeaders(unavailable) : {}),
          },
        };
      },
      onError: ({ error, req }) => {
        noteErrorAnswer(req, toAppError(error));
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error.cause ?? error }, 'trpc call failed');
      },
    }),
  );

  // The operator's API (keys, plans, usage) when ADMIN_TOKEN is set (server/admin).
  app.use(createAdminRouter(deps));

  // After the API, which most requests are for.
  // /healthz, /readyz (database reachable, migrations current) and /metrics.
  app.get(['/healthz', '/readyz', '/metrics'], createOpsRoutes(deps));
  // The status page at / and its files under /status/ (server/status).
  app.use(createStatusPage());
  // With the admin API on, /docs offers its document too (the document is public; its calls need ADMIN_TOKEN).
  const adminDocument = {
    name: `opscan admin API (${ADMIN_BASE_PATH})`,
    url: `${ADMIN_BASE_PATH}/openapi.json`,
  };
  app.use(createDocsRouter([specDialect, jiffyscanDialect], deps.config.ADMIN_TOKEN ? [adminDocument] : []));

  // The subgraph-style GraphQL endpoint per network (server/graphql).
  app.use(createSubgraphRoutes(deps));

  app.use((req, res) => {
    res.status(404).json({ message: `No endpoint ${req.method} ${req.path}`, code: 'NOT_FOUND' });
  });
  app.use(createErrorHandler(deps.log));
  return app;
}
