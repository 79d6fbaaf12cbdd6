/**
 * The server's types the client's are generated from (generateTypes.ts): read by the generator,
 * never by the client package, whose declarations must not name the server.
 */
import type { z } from 'zod';
import type { EndpointName, Endpoints, OutputOf } from '../../server/endpoints/index.js';
import type { AppRouter } from '../../server/trpc/router.js';

type ProcedureTypes<P> = P extends { _def: { type: infer TKind; $types: { input: infer TInput; output: infer TOutput } } }
  ? { kind: TKind; input: TInput; output: TOutput }
  : never;
type Record = AppRouter['_def']['record'];

export type Sources = {
  rest: { [K in EndpointName]: { input: z.input<Endpoints[K]['input']>; output: OutputOf<K> } };
  trpc: { [K in EndpointName]: ProcedureTypes<Record[K]> };
  jiffyscan: { [K in EndpointName]: ProcedureTypes<Record['jiffyscan'][K]> };
  errorShape: AppRouter['_def']['_config']['$types']['errorShape'];
  meta: AppRouter['_def']['_config']['$types']['meta'];
};
