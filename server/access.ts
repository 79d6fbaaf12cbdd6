import type { ApiKey, ApiKeyScope } from '../shared/db/tables/apiKeys.js';
import type { ApiPlan } from '../shared/db/tables/apiPlans.js';
import type { NetworkConfig, WebConfig } from '../shared/config.js';
import { AppError } from '../shared/errors.js';
import type { Ctx, Deps, RequestHeaders } from './context.js';

/**
 * Who may call, in one place: the step every transport (REST, tRPC, GraphQL) runs before a handler.
 * It authenticates the caller (401 without a key, 403 for an unknown, revoked or expired one),
 * checks the key's scope for the endpoint's capability (403), and counts the call against the
 * caller's rate limit and its plan's quotas (429). A handler receives the context this step
 * returns, so an endpoint that needs a key sees one, never `null`.
 */

/** 'apiKey' (the default): the caller must send a valid key. 'none': anyone may call (counted per address). */
export type Access = 'apiKey' | 'none';

/** What an endpoint declares about its callers (on its definition, server/endpoints/defineEndpoint.ts). */
export type AccessRule = {
  auth?: Access;
  /** The scope a key needs to call it: 'read' (the default: the data API), 'webhooks', 'admin'. */
  capability?: ApiKeyScope;
};

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

/** The stored key the request carries, active or not: 401 without a key, 403 for an unknown one. */
async function identify(deps: Pick<Deps, 'db' | 'services'>, headers: RequestHeaders): Promise<ApiKey> {
  const key = apiKeyOf(headers);
  if (!key) {
    throw new AppError('UNAUTHORIZED', 'Missing API key: send it in the x-api-key header.', { param: 'x-api-key' });
  }
  const found = key.length <= 200 ? await deps.services.apiKeys.find(deps.db, key) : null;
  if (!found) throw new AppError('FORBIDDEN', 'Invalid API Key', { param: 'x-api-key' });
  return found;
}

/** 403 for a revoked key (the spec's "Invalid API Key") or one past its expiry (a rotated key after its grace period). */
function assertUsable(key: ApiKey, now = Date.now()): void {
  if (key.revokedAt) throw new AppError('FORBIDDEN', 'Invalid API Key', { param: 'x-api-key' });
  if (key.expiresAt && key.expiresAt.getTime() <= now) {
    throw new AppError('FORBIDDEN', `API key expired at ${key.expiresAt.toISOString()}`, {
      param: 'x-api-key',
      meta: { expiredAt: key.expiresAt.toISOString() },
    });
  }
}

/** 403 naming the scope when the key lacks the endpoint's capability. */
function assertScope(key: ApiKey, capability: ApiKeyScope): void {
  if (key.scopes.includes(capability)) return;
  throw new AppError(
    'FORBIDDEN',
    `This API key lacks the "${capability}" scope this endpoint needs (it has: ${key.scopes.join(', ') || 'none'})`,
    {
      param: 'x-api-key',
      meta: { missingScope: capability },
    },
  );
}

/** The key's plan, from the in-process cache (null: no plan). */
export async function planOf(ctx: Pick<Deps, 'db' | 'services'>, key: ApiKey): Promise<ApiPlan | null> {
  return key.planId === null ? null : ctx.services.apiKeys.plan(ctx.db, key.planId);
}

export type Admission<A extends Access> = {
  /** The caller's context, for the handler. */
  ctx: CallerCtx<A>;
  /**
   * Settles when the rate limiter (and the plan's quotas) have counted the call (rejects with a 429
   * when it is over a limit). A transport may validate input and look up its cache meanwhile (the
   * count is a Redis round trip), but must await it before it computes or answers anything.
   */
  admitted: Promise<void>;
  /** The key's plan (null: none, or a keyless call), for the network scope. */
  plan: ApiPlan | null;
};

/**
 * The key's part of admission, without counting the call: authenticates the caller (401, 403),
 * checks the key's lifecycle and its scope for `capability` (403), and returns its plan. The key is
 * on the context afterwards, even when it is refused, so that the refusal is metered under it.
 */
export async function authorize(ctx: Ctx, capability: ApiKeyScope): Promise<ApiPlan | null> {
  const key = await identify(ctx, ctx.headers);
  ctx.apiKey = key;
  assertUsable(key);
  assertScope(key, capability);
  return key.planId === null ? null : planOf(ctx, key);
}

/**
 * Authenticates the caller when the endpoint asks for a key, checks the key's lifecycle and scope,
 * then counts the call against its limits. The key, once known, is on the context even when it is
 * refused, so that the refusal is metered under it.
 */
export async function admit<A extends Access>(ctx: Ctx, rule: AccessRule & { auth?: A }): Promise<Admission<A>> {
  const plan = (rule.auth ?? 'apiKey') === 'apiKey' ? await authorize(ctx, rule.capability ?? 'read') : null;
  const subject = ctx.apiKey ? `key:${ctx.apiKey.id}` : `ip:${ctx.clientIp()}`;
  const counted = plan
    ? ctx.services.limiter.consume(subject, plan.rateLimitPerSecond, plan.burst)
    : ctx.services.limiter.consume(subject, ctx.apiKey?.rateLimitPerSecond ?? ctx.config.RATE_LIMIT_PER_SECOND);
  // Counted under the first key of its rotation chain: rotating a key gives it no fresh quota.
  const keyId = ctx.apiKey?.quotaHolderId;
  const admitted =
    plan && keyId
      ? counted.then((state) => {
          ctx.rateLimit = state;
          // Only calls the rate limiter admits count against the quotas.
          return ctx.services.quotas.count(ctx.db, keyId, plan);
        })
      : counted.then((state) => {
          ctx.rateLimit = state;
        });
  // Awaited by the transport on every path; this only keeps a refusal that lands meanwhile from counting as unhandled.
  admitted.catch(() => {});
  // The key, when asked for, was set just above: the context now is a CallerCtx<A>.
  return { ctx: ctx as CallerCtx<A>, admitted, plan };
}

/**
 * The networks a key may read: its own list ∩ its plan's (null: every network the deployment serves).
 */
export function allowedNetworks(key: ApiKey | null, plan: ApiPlan | null): ReadonlySet<string> | null {
  if (!key || (key.networks === null && (plan?.networks ?? null) === null)) return null;
  const own = key.networks;
  const planned = plan?.networks ?? null;
  const names = own === null ? planned! : planned === null ? own : own.filter((n) => planned.includes(n));
  return new Set(names);
}

/** 403 naming the network when the key may not read it. */
export function assertNetworkAllowed(allowed: ReadonlySet<string> | null, network: string): void {
  if (!allowed || allowed.has(network)) return;
  throw new AppError('FORBIDDEN', `This API key may not read network "${network}" (it may read: ${[...allowed].join(', ') || 'none'})`, {
    param: 'network',
    meta: { network, allowedNetworks: [...allowed] },
  });
}

/**
 * The deployment's configuration as a key restricted to `allowed` networks sees it: only those
 * networks are served (a hash looked up on every network searches those; an answer for every
 * network covers those). The default network stays the deployment's, so a call that names none and
 * falls to it is refused naming it (servedNetwork) rather than answered for another network.
 */
export function configFor(config: WebConfig, allowed: ReadonlySet<string>): WebConfig {
  const networks: NetworkConfig[] = config.networks.filter((n) => allowed.has(n.name));
  return { ...config, networks };
}
