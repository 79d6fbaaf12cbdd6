import type { z } from 'zod';
import type { NetworkConfig, WebConfig } from '../../shared/config.js';
import { ANY_EPOCH, decideTtl, epochTag } from '../cache/cachePolicy.js';
import type { Answer } from '../cache/responseCache.js';
import type { Ctx } from '../context.js';
import { admit } from '../access.js';
import { parseInput } from './inputs.js';
import type { Endpoint } from './defineEndpoint.js';

/**
 * How a dialect presents an endpoint's answer: `namespace` keeps its cache entries apart from other
 * dialects' ('' for the spec's), `present` maps the spec answer (absent: the spec answer as is).
 */
export type Presenter = { namespace: string; present?: (value: unknown, ctx: Ctx) => unknown };

const AS_SPECIFIED: Presenter = { namespace: '' };

/**
 * The one path both transports take for every procedure call: admit the caller (server/access.ts:
 * key, and a count against its rate limit, so each call of a tRPC batch counts), validate, then
 * answer through the read-through cache when the endpoint declares a cache policy. The rate-limit
 * count (a Redis round trip) runs alongside validation and the cache lookup; nothing is computed and
 * nothing is answered before its verdict, so a refused call is a 429 whatever it asked. A dialect's presentation is
 * applied to the computed answer before it is cached, so a hit costs the same in every dialect; the
 * cache policy still judges the spec answer.
 */
export async function runEndpoint(
  ctx: Ctx,
  { name, endpoint, presenter = AS_SPECIFIED }: { name: string; endpoint: Endpoint; presenter?: Presenter },
  rawInput: unknown,
): Promise<Answer> {
  const { ctx: caller, admitted } = await admit(ctx, endpoint.auth ?? 'apiKey');
  let input: z.output<z.ZodType>;
  try {
    input = parseInput(endpoint.input, rawInput ?? {});
  } catch (invalid) {
    await admitted;
    throw invalid;
  }
  const present = async (value: unknown) => (presenter.present ? presenter.present(value, caller) : value);
  const policy = endpoint.cache ?? 'none';
  if (policy === 'none') {
    await admitted;
    return { value: await present(await endpoint.handler(caller, input)), maxAgeSeconds: 0, cache: 'none' };
  }

  const networks = networksOf(ctx.config, input);
  const states = await ctx.services.indexer.current();
  const epoch = policy === 'live' ? ANY_EPOCH : epochTag(networks, states);
  const key = `${presenter.namespace}${cacheKey(name, input)}`;
  const hit = ctx.services.cache.lookup(key, epoch);
  await admitted;
  return (
    (await hit) ??
    ctx.services.cache.fill(key, epoch, async () => {
      const value = await endpoint.handler(caller, input);
      const finalTtlMs = ctx.config.CACHE_FINAL_TTL_SECONDS * 1000;
      return { value: await present(value), ...decideTtl(policy, value, input, { networks, states, finalTtlMs }) };
    })
  );
}

/** The answer as JSON bytes (REST writes them as they are) or as a value (tRPC), whichever is at hand. */
export const answerJson = (answer: Answer): Buffer => answer.json ?? Buffer.from(JSON.stringify(answer.value));
export const answerValue = (answer: Answer): unknown => (answer.value !== undefined ? answer.value : JSON.parse(answer.json!.toString()));

/** The networks an input's answer depends on: the one it names, else every served network. */
function networksOf(config: WebConfig, input: unknown): NetworkConfig[] {
  const named = (input as { network?: unknown }).network;
  if (typeof named !== 'string') return config.networks;
  return config.networks.filter((n) => n.name === named);
}

/** Endpoint name + validated input (defaults applied, case normalised), keys sorted. */
function cacheKey(name: string, input: unknown): string {
  const fields = input && typeof input === 'object' ? Object.keys(input).sort() : [];
  return `${name}:${JSON.stringify(input, fields)}`;
}
