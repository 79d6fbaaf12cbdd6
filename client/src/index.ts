/**
 * opscan's client library (`import { createOpscanClient } from '@opscan/client'`), with no runtime
 * dependency beyond `fetch`:
 * - the three operations of the published subgraph client, same names, arguments and answers, and
 *   `graphql` for any other query of a network's subgraph;
 * - `v0`: a typed method per `/v0` endpoint;
 * - `rpcUrl(network)`: the URL of the network's ERC-4337 RPC, for a wallet's bundler transport;
 * - the `AppRouter` type, for a typed `@trpc/client` on `/trpc`, in `@opscan/client/trpc` (it needs
 *   `@trpc/server`'s types, which this entry does not).
 * Every call is bounded by a timeout (30 s by default) and takes an AbortSignal; every failure is an
 * OpscanError whose `kind` says what happened (network, timeout, aborted, http, api).
 */
import type { OpscanClientOptions } from './request.js';
import { createRestClient } from './rest.js';
import { createSubgraphOperations } from './subgraph.js';
import { rpcUrl } from './rpc.js';

export { OpscanError, type OpscanErrorKind } from './errors.js';
export { DEFAULT_TIMEOUT_MS } from './request.js';
export { rpcUrl } from './rpc.js';
export type { AbortSignalLike, CallOptions, Fetch, FetchResponse, OpscanClientOptions, PlatformAbortSignal } from './request.js';
export type { EndpointName, InputOf, OutputOf, RestClient, WithNetwork } from './rest.js';
export type {
  AddressActivity,
  NetworkStatus,
  SubgraphAccount,
  SubgraphActivityOp,
  SubgraphTokenTransfer,
  SubgraphUserOp,
} from './subgraph.js';
export type { AppErrorCode, Endpoints, JiffyscanOutputs } from './api.js';

/**
 * A client of one opscan deployment. `Network` is the union of its network names
 * (`createOpscanClient<'mainnet' | 'base-sepolia'>({ … })`): every `network` parameter is then
 * checked against it; by default any string.
 */
export function createOpscanClient<Network extends string = string>(options: OpscanClientOptions) {
  return {
    ...createSubgraphOperations<Network>(options),
    v0: createRestClient<Network>(options),
    rpcUrl: (network: Network) => rpcUrl(options, network),
  };
}

export type OpscanClient<Network extends string = string> = ReturnType<typeof createOpscanClient<Network>>;
