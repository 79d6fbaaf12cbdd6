import type { z } from 'zod';
import type { ApiKeyScope } from '../../shared/db/tables/apiKeys.js';
import type { Access, CallerCtx } from '../access.js';
import type { CachePolicy } from '../cache/cachePolicy.js';

/**
 * An endpoint is data: its input schema (which must accept query-string values: strings, and
 * numbers through z.coerce), its response schema, and a handler that never sees HTTP. The registry
 * key (server/endpoints/index.ts) is both the REST path `/v0/<name>` and the tRPC procedure name.
 * Every transport admits the caller (server/access.ts) before the handler runs, so the handler of
 * an endpoint that needs a key receives a context with one.
 */
export type EndpointKind = 'query' | 'mutation';

export type Endpoint<
  TInput extends z.ZodType = z.ZodType,
  TOutput extends z.ZodType = z.ZodType,
  TKind extends EndpointKind = EndpointKind,
  TAccess extends Access = Access,
> = {
  /** One line for the API reference. */
  summary: string;
  /** Longer notes for the API reference (parameter semantics, envelope choices). */
  description?: string;
  /** OpenAPI tag (the spec's endpoint group). */
  tag: string;
  input: TInput;
  output: TOutput;
  /** 'none' for the few endpoints callers reach without a key. Default: an API key is required. */
  auth?: TAccess;
  /**
   * The scope a key needs (api_keys.scopes; checked by server/access.ts for every transport):
   * 'read' (the default: the data API), 'webhooks' (the webhook endpoints), 'admin' (operator
   * endpoints; none in /v0 today: the status summary is public, the admin API has its own token).
   */
  capability?: ApiKeyScope;
  /** REST methods (default GET); a mutation on tRPC when it changes state. */
  methods?: ReadonlyArray<'GET' | 'POST' | 'DELETE'>;
  kind?: TKind;
  /**
   * Where the handler's queries go when read replicas are configured (DATABASE_READ_URL,
   * server/readReplicas.ts): 'replica' (the default of queries), or 'primary' (the default of
   * mutations) for an endpoint that writes or must read its own writes (webhooks, deliveries).
   */
  reads?: 'replica' | 'primary';
  /** How long answers may be reused (server/cache/cachePolicy.ts). Default 'none': never cached. */
  cache?: CachePolicy<z.input<TOutput>, z.output<TInput>>;
  // A method, so that an endpoint needing a key still counts as an Endpoint of any access.
  handler(ctx: CallerCtx<TAccess>, input: z.output<TInput>): Promise<z.input<TOutput>>;
};

export const defineEndpoint = <
  TInput extends z.ZodType,
  TOutput extends z.ZodType,
  TKind extends EndpointKind = 'query',
  TAccess extends Access = 'apiKey',
>(
  endpoint: Endpoint<TInput, TOutput, TKind, TAccess>,
): Endpoint<TInput, TOutput, TKind, TAccess> => endpoint;
