import express from 'express';
import { AppError } from '../../shared/errors.js';
import { bearerMatches } from '../../shared/opsServer.js';
import type { Deps } from '../context.js';
import { errorBody, HTTP_STATUS, toAppError } from '../http/errors.js';
import { rateLimitHeaders } from '../http/rateLimitHeaders.js';
import { ADMIN_BASE_PATH, buildAdminOpenApiDocument, pathFieldsOf } from './openapi.js';
import { adminOperations, perform, type AdminOperation } from './operations/index.js';

/**
 * The admin API under /admin/v1 (server/admin/operations/ over HTTP), for the operator's own
 * tools. Authenticated by the ADMIN_TOKEN bearer token alone (never an API key), compared in
 * constant time; without the setting nothing is mounted and /admin/v1/* is the app's 404. Answers
 * are `cache-control: no-store` and never pass through the response cache (that is /v0's).
 *
 * Guessing the token is made slow: each wrong or missing token counts against the caller's address
 * in the rate limiter (shared across processes with Redis) at FAILED_AUTH_PER_SECOND; past its
 * burst, the address gets 429 for every admin call, a right token included, until it has waited.
 */
export const FAILED_AUTH_PER_SECOND = 1;
/** Blocked addresses remembered at most (expired ones are swept beyond this). */
const MAX_BLOCKED = 10_000;

export function createAdminRouter(deps: Deps): express.Router {
  const router = express.Router();
  const token = deps.config.ADMIN_TOKEN;
  if (!token) return router;

  const blockedUntil = new Map<string, number>();
  const authenticate: express.RequestHandler = async (req, _res, next) => {
    const address = req.ip ?? 'unknown';
    const until = blockedUntil.get(address) ?? 0;
    if (until > Date.now()) throw tooManyFailures(Math.ceil((until - Date.now()) / 1000));
    if (bearerMatches(token, req.get('authorization'))) return next();
    try {
      await deps.services.limiter.consume(`admin-auth:${address}`, FAILED_AUTH_PER_SECOND);
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'TOO_MANY_REQUESTS')) throw e;
      const retryAfter = (e.meta as { retryAfter: number }).retryAfter;
      if (blockedUntil.size >= MAX_BLOCKED) for (const [a, t] of blockedUntil) if (t <= Date.now()) blockedUntil.delete(a);
      if (blockedUntil.size < MAX_BLOCKED) blockedUntil.set(address, Date.now() + retryAfter * 1000);
      throw tooManyFailures(retryAfter);
    }
    throw new AppError('UNAUTHORIZED', 'The admin API needs Authorization: Bearer <ADMIN_TOKEN> (API keys are not accepted here)', {
      param: 'authorization',
    });
  };

  router.use(ADMIN_BASE_PATH, (_req, res, next) => {
    res.setHeader('cache-control', 'no-store');
    next();
  });
  let document: ReturnType<typeof buildAdminOpenApiDocument> | undefined;
  // The document is public, like /v0's: it describes the API, it opens nothing.
  router.get(`${ADMIN_BASE_PATH}/openapi.json`, (_req, res) => {
    res.json((document ??= buildAdminOpenApiDocument()));
  });
  router.use(ADMIN_BASE_PATH, authenticate);
  for (const op of Object.values(adminOperations) as AdminOperation[]) {
    const path = ADMIN_BASE_PATH + op.path.replace(/\{(\w+)\}/g, ':$1');
    const inPath = pathFieldsOf(op);
    router[op.method === 'GET' ? 'get' : op.method === 'POST' ? 'post' : op.method === 'PATCH' ? 'patch' : 'delete'](
      path,
      async (req, res) => {
        const fields: unknown = op.method === 'GET' ? req.query : (req.body ?? {});
        if (typeof fields !== 'object' || Array.isArray(fields))
          throw new AppError('BAD_REQUEST', 'Invalid input: the body must be a JSON object');
        const params = Object.fromEntries(inPath.map((f) => [f, req.params[f]]));
        res.status(op.status ?? 200).json(await perform(deps.db, op, { ...fields, ...params }));
      },
    );
  }
  router.use(ADMIN_BASE_PATH, (req, res) => {
    res.status(404).json({
      message: `No admin endpoint ${req.method} ${req.baseUrl}${req.path} (see ${ADMIN_BASE_PATH}/openapi.json)`,
      code: 'NOT_FOUND',
    });
  });
  const handleError: express.ErrorRequestHandler = (error, req, res, next) => {
    if (!req.originalUrl.startsWith(ADMIN_BASE_PATH)) return next(error);
    // Body-parser refusals (malformed JSON, too large) go to the app's handler, which knows them.
    if (typeof (error as { status?: unknown }).status === 'number') return next(error);
    const appError = toAppError(error);
    if (appError.code === 'INTERNAL_SERVER_ERROR')
      deps.log.error({ err: appError.cause ?? appError, path: req.path }, 'admin request failed');
    const headers: Record<string, string> =
      appError.code === 'UNAUTHORIZED'
        ? { 'www-authenticate': 'Bearer realm="opscan admin"' }
        : appError.code === 'TOO_MANY_REQUESTS'
          ? rateLimitHeaders(null, appError)
          : appError.code === 'SERVICE_UNAVAILABLE'
            ? { 'retry-after': '5' }
            : {};
    res.status(HTTP_STATUS[appError.code]).set(headers).json(errorBody(appError));
  };
  router.use(handleError);
  return router;
}

function tooManyFailures(retryAfter: number): AppError {
  return new AppError('TOO_MANY_REQUESTS', `Too many failed admin authentications from this address; retry in ${retryAfter} s.`, {
    meta: { retryAfter, limit: FAILED_AUTH_PER_SECOND },
  });
}
