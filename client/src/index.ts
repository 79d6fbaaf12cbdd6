/**
 * opscan's client library (`import { createOpscanClient } from '@opscan/client'`), with no runtime
 * dependency beyond `fetch`:
 * - the three operations of the published subgraph client, same names, arguments and answers;
 * - `v0`: a typed method per `/v0` endpoint;
 * - the `AppRouter` type, for a typed `@trpc/client` on `/trpc`, in `@opscan/client/trpc` (it needs
 *   `@trpc/server`'s types, which this entry does not).
 */
import type { OpscanClientOptions } from './request.js';
import { createRestClient } from './rest.js';
import { createSubgraphOperations } from './subgraph.js';

export { OpscanError } from './errors.js';
export type { Fetch, FetchResponse, OpscanClientOptions } from './request.js';
export type { EndpointName, InputOf, OutputOf, RestClient } from './rest.js';
export type { AddressActivity, NetworkStatus, SubgraphUserOp } from './subgraph.js';
export type { Endpoints, JiffyscanOutputs } from './api.js';

export function createOpscanClient(options: OpscanClientOptions) {
  return { ...createSubgraphOperations(options), v0: createRestClient(options) };
}

export type OpscanClient = ReturnType<typeof createOpscanClient>;
