import type { z } from 'zod';
import type { NetworkConfig, WebConfig } from '../../shared/config.js';
import { DatabaseDeadlineError, isDatabaseUnavailable, withDeadline } from '../../shared/db/client.js';
import { AppError } from '../../shared/errors.js';
import { toJsonBody } from '../../shared/jsonText.js';
import { NO_HEADS } from '../cache/cacheEntry.js';
import { ANY_EPOCH, decideTtl, epochTag, finalTag, headTag } from '../cache/cachePolicy.js';
import type { Answer } from '../cache/responseCache.js';
import type { Ctx } from '../context.js';
import { admit, allowedNetworks, assertNetworkAllowed, configFor } from '../access.js';
import { HTTP_STATUS, toAppError } from '../http/errors.js';
import type { Reader } from '../readReplicas.js';
import { parseInput } from './inputs.js';
import type { Endpoint } from './defineEndpoint.js';

/**
 * How a dialect presents an endpoint's answer: `namespace` keeps its cache entries apart from other
 * dialects' ('' for the spec's), `present` maps the spec answer (absent: the spec answer as is),
 * `notFound` answers the spec's 404 as a body (absent: the 404).
 */
export type Presenter = {
  namespace: string;
  present?: (value: unknown, ctx: Ctx) => unknown;
  notFound?: (error: AppError) => unknown;
};

const AS_SPECIFIED: Presenter = { namespace: '' };

/**
 * The one path both transports take for every procedure call: admit the caller (server/access.ts:
 * key, and a count against its rate limit, so each call of a tRPC batch counts), validate, then
 * answer through the read-through cache when the endpoint declares a cache policy. The rate-limit
 * count (a Redis round trip) runs alongside validation and the cache lookup; nothing is computed and
 * nothing is answered before its verdict, so a refused call is a 429 whatever it asked. A dialect's presentation is
 * applied to the computed answer before it is cached, so a hit costs the same in every dialect; the
 * cache policy still judges the spec answer. All of it that waits on the database (the key, the
 * indexer state, the handler's queries) is due by the request's deadline (ctx.deadline): a database
 * that does not answer costs one budget, not the sum of each wait's limit.
 *
 * With read replicas, an endpoint that reads from them runs on the reader server/readReplicas.ts
 * chooses, and its cache epoch, heads and finality come from that reader's own indexer state; when
 * the replica turns out to be gone (a connection error), the call runs again on the next reader.
 */
export async function runEndpoint(
  ctx: Ctx,
  call: { name: string; endpoint: Endpoint; presenter?: Presenter },
  rawInput: unknown,
): Promise<Answer> {
  // Calls made with a key are metered (server/usageMeter.ts), refusals included, under the network
  // they named ('' when none or before their input was read).
  const metered = { network: '' };
  try {
    const answer = await withDeadline(ctx.deadline, () => answerOrPresentNotFound(ctx, call, rawInput, metered));
    if (ctx.apiKey && call.endpoint.auth !== 'none') ctx.services.usage.record(ctx.apiKey.id, call.name, metered.network, 200);
    return answer;
  } catch (error) {
    if (ctx.apiKey && call.endpoint.auth !== 'none') {
      ctx.services.usage.record(ctx.apiKey.id, call.name, metered.network, HTTP_STATUS[toAppError(error).code]);
    }
    throw error;
  }
}

async function answerOrPresentNotFound(
  ctx: Ctx,
  call: { name: string; endpoint: Endpoint; presenter?: Presenter },
  rawInput: unknown,
  metered: { network: string },
): Promise<Answer> {
  const notFound = call.presenter?.notFound;
  if (!notFound) return answerCall(ctx, call, rawInput, metered);
  try {
    return await answerCall(ctx, call, rawInput, metered);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'NOT_FOUND') throw error;
    // Not cached: the 404 it stands for is not either.
    return { value: notFound(error), maxAgeSeconds: 0, cache: 'none' };
  }
}

async function answerCall(
  ctx: Ctx,
  { name, endpoint, presenter = AS_SPECIFIED }: { name: string; endpoint: Endpoint; presenter?: Presenter },
  rawInput: unknown,
  metered: { network: string },
): Promise<Answer> {
  const { ctx: admittedCaller, admitted, plan } = await admit(ctx, endpoint);
  let input: z.output<z.ZodType>;
  try {
    input = parseInput(endpoint.input, rawInput ?? {});
  } catch (invalid) {
    await admitted;
    throw invalid;
  }
  const named = (input as { network?: unknown }).network;
  if (typeof named === 'string') metered.network = named;
  // A key restricted to some networks: a named other one is refused; one named by none is answered
  // from the allowed networks only (their own cache entries: the answer differs).
  const allowed = endpoint.auth === 'none' ? null : allowedNetworks(ctx.apiKey, plan);
  let caller = admittedCaller;
  let scopeTag = '';
  if (allowed) {
    if (typeof named === 'string' && ctx.config.networks.some((n) => n.name === named)) {
      try {
        assertNetworkAllowed(allowed, named);
      } catch (refused) {
        await admitted;
        throw refused;
      }
    }
    caller = { ...admittedCaller, config: configFor(ctx.config, allowed) };
    if (typeof named !== 'string') scopeTag = `|networks=${[...allowed].sort().join(',')}`;
  }
  const policy = endpoint.cache ?? 'none';
  const networks = networksOf(caller.config, input);

  const answerFrom = async (reader: Reader): Promise<Answer> => {
    const on = reader.replica ? readingFrom(caller, reader) : caller;
    const present = (value: unknown): Promise<unknown> => Promise.resolve(presenter.present ? presenter.present(value, on) : value);
    if (policy === 'none') {
      await admitted;
      return { value: await present(await endpoint.handler(on, input)), maxAgeSeconds: 0, cache: 'none' };
    }
    const { states } = reader;
    const state =
      policy === 'live'
        ? { epoch: ANY_EPOCH, heads: NO_HEADS, final: ANY_EPOCH }
        : { epoch: epochTag(networks, states), heads: headTag(networks, states), final: finalTag(networks, states) };
    const key = `${presenter.namespace}${cacheKey(name, input)}${scopeTag}`;
    const hit = ctx.services.cache.lookup(key, state);
    await admitted;
    return (
      (await hit) ??
      ctx.services.cache.fill(key, state, async () => {
        const value = await endpoint.handler(on, input);
        const finalTtlMs = ctx.config.CACHE_FINAL_TTL_SECONDS * 1000;
        return { value: await present(value), ...decideTtl(policy, value, input, { networks, states, finalTtlMs }) };
      })
    );
  };

  const replicas =
    (endpoint.reads ?? (endpoint.kind === 'mutation' ? 'primary' : 'replica')) === 'replica' ? ctx.services.readReplicas : null;
  const primary = { db: ctx.db, indexer: ctx.services.indexer };
  if (!replicas) {
    const states = policy === 'none' ? new Map() : await primary.indexer.current();
    return answerFrom({ ...primary, states, replica: null });
  }
  let reader = await replicas.choose(primary, networks);
  for (;;) {
    try {
      return await answerFrom(reader);
    } catch (error) {
      if (!reader.replica) throw error;
      if (isWriteOnReplica(error)) {
        // The handler wrote through ctx.db: correct on the primary, and the replica is fine.
        ctx.log.warn(
          { endpoint: name },
          'endpoint wrote through ctx.db on a read replica: write through ctx.primary, or declare reads: primary',
        );
        return answerFrom({ ...primary, states: await primary.indexer.current(), replica: null });
      }
      // The replica went away mid-call: the work is read-only, so run it again on the next reader. Past
      // the request's deadline no reader would answer in time, and the replica is not to blame.
      if (!isDatabaseUnavailable(error) || error instanceof DatabaseDeadlineError) throw error;
      replicas.markDown(reader.replica);
      reader = await replicas.choose(primary, networks);
    }
  }
}

/** SQLSTATE 25006 read_only_sql_transaction: a write sent to a hot standby. */
const isWriteOnReplica = (error: unknown) => (error as { code?: unknown } | null)?.code === '25006';

/** The caller's context reading from a replica: its queries and its indexer view are the replica's. */
function readingFrom<C extends Ctx>(ctx: C, reader: Reader): C {
  return { ...ctx, db: reader.db, services: { ...ctx.services, indexer: reader.indexer } };
}

/** The answer as JSON bytes (REST writes them as they are) or as a value (tRPC), whichever is at hand. */
export const answerJson = (answer: Answer): Buffer => answer.json ?? toJsonBody(answer.value);
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
