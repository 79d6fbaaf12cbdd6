/**
 * The `AppRouter` type of opscan's tRPC endpoint (`/trpc`), for `createTRPCClient<AppRouter>` of
 * `@trpc/client`. Types only, built from api.ts and `@trpc/server`'s types (an optional peer
 * dependency): the spec's procedures at the top (`getUserOp`), the JiffyScan dialect's under
 * `jiffyscan.` (`jiffyscan.getUserOp`).
 */
import type { TRPC_ERROR_CODE_NUMBER, TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure } from '@trpc/server';
import type { Endpoints, JiffyscanOutputs, TrpcErrorData } from './api.js';

export type { AppErrorCode, TrpcErrorData } from './api.js';

type EndpointName = keyof Endpoints;

/**
 * The error shape: tRPC's code and the message; in `data` what the REST error body says (message,
 * opscan's code, the parameter at fault) and the HTTP status REST would answer.
 */
export type ErrorShape = { message: string; code: TRPC_ERROR_CODE_NUMBER; data: TrpcErrorData };

type Root = { ctx: object; meta: object; errorShape: ErrorShape; transformer: false };

type ProcedureOf<K extends EndpointName, TOutput> = Endpoints[K]['kind'] extends 'mutation'
  ? TRPCMutationProcedure<{ input: Endpoints[K]['input']; output: TOutput; meta: object }>
  : TRPCQueryProcedure<{ input: Endpoints[K]['input']; output: TOutput; meta: object }>;

type JiffyscanOutputOf<K extends EndpointName> = K extends keyof JiffyscanOutputs ? JiffyscanOutputs[K] : Endpoints[K]['output'];

export type AppRouter = TRPCBuiltRouter<
  Root,
  { [K in EndpointName]: ProcedureOf<K, Endpoints[K]['output']> } & {
    // A sub-router is held as its record of procedures, as t.router({ jiffyscan: t.router(…) }) keeps it.
    jiffyscan: { [K in EndpointName]: ProcedureOf<K, JiffyscanOutputOf<K>> };
  }
>;
