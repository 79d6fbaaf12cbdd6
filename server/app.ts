import cors from 'cors';
import express from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import { createContext, type Deps } from './context.js';
import { createErrorHandler } from './http/errorHandler.js';
import { createRestRouter, headersOf, requestIdOf } from './rest/router.js';
import { appRouter } from './trpc/router.js';

/** Browsers call the API from other origins with a custom header; preflight needs no key. */
const corsMiddleware = cors({
  origin: '*',
  methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['x-api-key', 'content-type', 'authorization', 'accept', 'x-request-id'],
  exposedHeaders: ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy'],
  maxAge: 86400,
});

/** Assembles the web app; never listens (supertest drives it directly). */
export function createApp(deps: Deps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(corsMiddleware);
  app.use(express.json({ limit: '64kb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.use('/v0', createRestRouter(deps));
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext: ({ req }) => createContext(deps, { requestId: requestIdOf(req), headers: headersOf(req) }),
      maxBatchSize: 10,
      onError: ({ error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error.cause ?? error }, 'trpc call failed');
      },
    }),
  );

  app.use((req, res) => {
    res.status(404).json({ message: `No endpoint ${req.method} ${req.path}`, code: 'NOT_FOUND' });
  });
  app.use(createErrorHandler(deps.log));
  return app;
}
