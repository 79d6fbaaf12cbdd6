import { initTRPC, TRPCError } from '@trpc/server';
import type { Ctx } from '../context.js';
import { callEndpoint, endpoints, type EndpointName, type Endpoints } from '../endpoints/index.js';
import { toAppError, trpcErrorData } from '../http/errors.js';
import type { Endpoint } from '../endpoints/defineEndpoint.js';
import type { Dialect, DialectOutputOf, Presentations } from '../dialects/dialect.js';
import { jiffyscanDialect } from '../dialects/jiffyscan.js';
import { specDialect } from '../dialects/spec.js';
import type { z } from 'zod';

const t = initTRPC.context<Ctx>().create({
  isDev: false,
  // Same code, message and parameter as the REST error body.
  errorFormatter({ shape, error }) {
    const appError = toAppError(error);
    return {
      ...shape,
      message: appError.message,
      data: trpcErrorData(appError),
    };
  },
});

function runner<K extends EndpointName, TOutput>(name: K, dialect: Dialect) {
  return async ({ ctx, input }: { ctx: Ctx; input: unknown }): Promise<TOutput> => {
    try {
      return await callEndpoint<K, TOutput>(ctx, name, input, dialect);
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
const queryProcedure = <K extends EndpointName, TOutput>(name: K, dialect: Dialect) =>
  t.procedure.input(inputOf(name)).query(runner<K, TOutput>(name, dialect));
const mutationProcedure = <K extends EndpointName, TOutput>(name: K, dialect: Dialect) =>
  t.procedure.input(inputOf(name)).mutation(runner<K, TOutput>(name, dialect));

type ProcedureOf<K extends EndpointName, TOutput> = Endpoints[K] extends { kind?: infer TKind }
  ? 'mutation' extends TKind
    ? 'query' extends TKind
      ? ReturnType<typeof queryProcedure<K, TOutput>>
      : ReturnType<typeof mutationProcedure<K, TOutput>>
    : ReturnType<typeof queryProcedure<K, TOutput>>
  : ReturnType<typeof queryProcedure<K, TOutput>>;

type ProceduresOf<P extends Presentations> = { [K in EndpointName]: ProcedureOf<K, DialectOutputOf<P, K>> };

/** Every endpoint as a procedure answering in `dialect`'s shapes. */
function proceduresOf<P extends Presentations>(dialect: Dialect<P>): ProceduresOf<P> {
  const procedureOf = (name: EndpointName) => {
    const endpoint: Endpoint = endpoints[name];
    return endpoint.kind === 'mutation' ? mutationProcedure(name, dialect) : queryProcedure(name, dialect);
  };
  return Object.fromEntries((Object.keys(endpoints) as EndpointName[]).map((name) => [name, procedureOf(name)])) as ProceduresOf<P>;
}

/** AppError codes are a subset of tRPC's, so tRPC picks the same HTTP status as REST. */
function toTRPCError(error: unknown): TRPCError {
  const appError = toAppError(error);
  return new TRPCError({ code: appError.code, message: appError.message, cause: appError });
}

/** The spec's procedures at the top (`getUserOp`), the JiffyScan dialect's under `jiffyscan.` (`jiffyscan.getUserOp`). */
export const appRouter = t.router({
  ...proceduresOf(specDialect),
  jiffyscan: t.router(proceduresOf(jiffyscanDialect)),
});

export type AppRouter = typeof appRouter;
