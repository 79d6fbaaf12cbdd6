import type { ApiKey } from '../shared/db/tables/apiKeys.js';
import { AppError } from '../shared/errors.js';
import type { Ctx, Deps, RequestHeaders } from './context.js';

/**
 * Who may call, in one place: the step every transport (REST, tRPC, GraphQL) runs before a handler.
 * It authenticates the caller (401 without a key, 403 for an unknown or revoked one) and counts the
 * call against the caller's rate limit (429). A handler receives the context this step returns, so
 * an endpoint that needs a key sees one, never `null`.
 */

/** 'apiKey' (the default): the caller must send a valid key. 'none': anyone may call (counted per address). */
export type Access = 'apiKey' | 'none';

/** The context a handler of an endpoint with `access` receives. */
export type CallerCtx<A extends Access> = A extends 'none' ? Ctx : Ctx & { apiKey: ApiKey };

/** The key a request carries: the `x-api-key` header, or HTTP Basic credentials (password = key). */
export function apiKeyOf(headers: RequestHeaders): string | undefined {
  if (headers.apiKey) return headers.apiKey.trim();
  const basic = /^Basic\s+(.+)$/i.exec(headers.authorization ?? '');
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return (colon >= 0 ? decoded.slice(colon + 1) : decoded).trim() || undefined;
}

/** 401 without a key, 403 for an unknown or revoked one (the spec's "Invalid API Key"). */
export async function authenticate(deps: Pick<Deps, 'db' | 'services'>, headers: RequestHeaders): Promise<ApiKey> {
  const key = apiKeyOf(headers);
  if (!key) {
    throw new AppError('UNAUTHORIZED', 'Missing API key: send it in the x-api-key header.', { param: 'x-api-key' });
  }
  const found = key.length <= 200 ? await deps.services.apiKeys.find(deps.db, key) : null;
  if (!found || found.revokedAt) {
    throw new AppError('FORBIDDEN', 'Invalid API Key', { param: 'x-api-key' });
  }
  return found;
}

export type Admission<A extends Access> = {
  /** The caller's context, for the handler. */
  ctx: CallerCtx<A>;
  /**
   * Settles when the rate limiter has counted the call (rejects with a 429 when it is over the
   * limit). A transport may validate input and look up its cache meanwhile (the count is a Redis
   * round trip), but must await it before it computes or answers anything.
   */
  admitted: Promise<void>;
};

/** Authenticates the caller when `access` asks for a key, then counts the call against its limit. */
export async function admit<A extends Access>(ctx: Ctx, access: A): Promise<Admission<A>> {
  if (access === 'apiKey') ctx.apiKey = await authenticate(ctx, ctx.headers);
  const subject = ctx.apiKey ? `key:${ctx.apiKey.id}` : `ip:${ctx.clientIp()}`;
  const admitted = ctx.services.limiter
    .consume(subject, ctx.apiKey?.rateLimitPerSecond ?? ctx.config.RATE_LIMIT_PER_SECOND)
    .then((state) => {
      ctx.rateLimit = state;
    });
  // Awaited by the transport on every path; this only keeps a refusal that lands meanwhile from counting as unhandled.
  admitted.catch(() => {});
  // The key, when asked for, was set just above: the context now is a CallerCtx<A>.
  return { ctx: ctx as CallerCtx<A>, admitted };
}
