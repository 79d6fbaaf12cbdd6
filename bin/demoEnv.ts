import { envSuffix } from '../shared/networks.js';

type Env = Record<string, string | undefined>;

/**
 * The environment `npm start` runs on once it has started its demo chain (a devnet with no
 * RPC_URL_DEVNET): the chain's URLs, and webhooks allowed to reach receivers on this machine, as a
 * newcomer's first webhook is a local `http://127.0.0.1:…` one (it is a local demo; the dispatcher
 * warns that the setting is on). What the operator set stays as it is.
 */
export function demoChainEnv(env: Env, network: { name: string }, rpcUrl: string): Env {
  const suffix = envSuffix(network.name);
  return {
    ...env,
    [`RPC_URL_${suffix}`]: rpcUrl,
    // anvil serves WebSocket on its HTTP port: the indexer follows the demo chain's head as it moves.
    [`RPC_WS_URL_${suffix}`]: env[`RPC_WS_URL_${suffix}`] || rpcUrl.replace(/^http/, 'ws'),
    WEBHOOK_ALLOW_PRIVATE_URLS: env.WEBHOOK_ALLOW_PRIVATE_URLS || 'true',
  };
}
