import type { z } from 'zod';
import type { CachePolicy } from '../cache/cachePolicy.js';
import type { Ctx } from '../context.js';

/**
 * An endpoint is data: its input schema (which must accept query-string values: strings, and
 * numbers through z.coerce), its response schema, and a handler that never sees HTTP. The registry
 * key (server/endpoints/index.ts) is both the REST path `/v0/<name>` and the tRPC procedure name.
 */
export type EndpointKind = 'query' | 'mutation';

export type Endpoint<
  TInput extends z.ZodType = z.ZodType,
  TOutput extends z.ZodType = z.ZodType,
  TKind extends EndpointKind = EndpointKind,
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
  auth?: 'apiKey' | 'none';
  /** REST methods (default GET); a mutation on tRPC when it changes state. */
  methods?: ReadonlyArray<'GET' | 'POST' | 'DELETE'>;
  kind?: TKind;
  /** How long answers may be reused (server/cache/cachePolicy.ts). Default 'none': never cached. */
  cache?: CachePolicy<z.input<TOutput>, z.output<TInput>>;
  handler: (ctx: Ctx, input: z.output<TInput>) => Promise<z.input<TOutput>>;
};

export const defineEndpoint = <TInput extends z.ZodType, TOutput extends z.ZodType, TKind extends EndpointKind = 'query'>(
  endpoint: Endpoint<TInput, TOutput, TKind>,
): Endpoint<TInput, TOutput, TKind> => endpoint;
