import type { OpscanClientOptions } from './request.js';

/**
 * The URL of a network's ERC-4337 RPC (`POST /rpc/<network>`), the key in its `apikey` parameter:
 * what a wallet's bundler transport takes as its one URL (viem's `http(url)` in `createBundlerClient`,
 * permissionless' `bundlerTransport`). It answers eth_getUserOperationReceipt and
 * eth_getUserOperationByHash for any op indexed, of any age; other methods go to the bundler the
 * deployment names for the network, if any.
 */
export function rpcUrl(options: Pick<OpscanClientOptions, 'url' | 'apiKey'>, network: string): string {
  return `${options.url.replace(/\/+$/, '')}/rpc/${encodeURIComponent(network)}?apikey=${encodeURIComponent(options.apiKey)}`;
}
