import { initTRPC, TRPCError } from '@trpc/server';
import type { Ctx } from '../context.js';
import { callEndpoint, endpoints, type EndpointName, type Endpoints, type OutputOf } from '../endpoints/index.js';
import { errorBody, HTTP_STATUS, toAppError } from '../http/errors.js';
import type { Endpoint } from '../endpoints/defineEndpoint.js';
import type { z } from 'zod';

const t = initTRPC.context<Ctx>().create({
  isDev: false,
  // Same code, message and parameter as the REST error body.
  errorFormatter({ shape, error }) {
    const appError = toAppError(error);
    return {
      ...shape,
      message: appError.message,
      data: { ...errorBody(appError), httpStatus: HTTP_STATUS[appError.code] },
    };
  },
});

function runner<K extends EndpointName>(name: K) {
  return async ({ ctx, input }: { ctx: Ctx; input: unknown }): Promise<OutputOf<K>> => {
    try {
      return await callEndpoint(ctx, name, input);
    } catch (error) {
      throw toTRPCError(error);
    }
  };
}

// tRPC gets a pass-through parser typed with the endpoint's input, so that clients are typed while
// validation happens once, in callEndpoint, after authentication and rate limiting, exactly as on
// REST (same order of checks, same errors).
const inputOf =
  <K extends EndpointName>(_name: K) =>
  (raw: unknown) =>
    raw as z.input<Endpoints[K]['input']>;
const queryProcedure = <K extends EndpointName>(name: K) => t.procedure.input(inputOf(name)).query(runner(name));
const mutationProcedure = <K extends EndpointName>(name: K) => t.procedure.input(inputOf(name)).mutation(runner(name));

type ProcedureOf<K extends EndpointName> = Endpoints[K] extends { kind?: infer TKind }
  ? 'mutation' extends TKind
    ? 'query' extends TKind
      ? ReturnType<typeof queryProcedure<K>>
      : ReturnType<typeof mutationProcedure<K>>
    : ReturnType<typeof queryProcedure<K>>
  : ReturnType<typeof queryProcedure<K>>;

function toProcedure<K extends EndpointName>(name: K): ProcedureOf<K> {
  const endpoint = endpoints[name] as unknown as Endpoint;
  return (endpoint.kind === 'mutation' ? mutationProcedure(name) : queryProcedure(name)) as ProcedureOf<K>;
}

/** AppError codes are a subset of tRPC's, so tRPC picks the same HTTP status as REST. */
function toTRPCError(error: unknown): TRPCError {
  const appError = toAppError(error);
  return new TRPCError({ code: appError.code, message: appError.message, cause: appError });
}

export const appRouter = t.router(
  Object.fromEntries((Object.keys(endpoints) as EndpointName[]).map((name) => [name, toProcedure(name)])) as unknown as {
    [K in EndpointName]: ProcedureOf<K>;
  },
);

export type AppRouter = typeof appRouter;
