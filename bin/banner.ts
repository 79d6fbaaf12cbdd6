/**
 * What `npm start` shows a person once everything runs: where to look, the key, and three curl
 * commands that work as printed (with the key inline when it was just created).
 */
import { rpcUrl } from '../client/src/rpc.js';

export type BannerFacts = {
  url: string;
  network: string;
  /** The key created by this start (shown once), or null when keys already existed. */
  newKey: string | null;
  /** A user op hash indexed on `network`, for the getUserOp example (null: none indexed yet). */
  userOpHash: string | null;
  store: string;
  /** Whether another process may open the store meanwhile (PostgreSQL: yes; PGlite: no). */
  sharedStore: boolean;
  demoChain: boolean;
};

const KEY_VARIABLE = 'OPSCAN_API_KEY';

/** The network's ERC-4337 RPC URL with the key (the variable's name when the key is not shown). */
function rpcLine(f: Pick<BannerFacts, 'url' | 'network' | 'newKey'>): string {
  const url = f.newKey
    ? rpcUrl({ url: f.url, apiKey: f.newKey }, f.network)
    : `${f.url}/rpc/${encodeURIComponent(f.network)}?apikey=$${KEY_VARIABLE}`;
  return `  ERC-4337 RPC ${url}   (a wallet's bundler transport: viem, permissionless)`;
}

export function exampleCommands(f: Pick<BannerFacts, 'url' | 'network' | 'newKey' | 'userOpHash'>): string[] {
  const key = f.newKey ?? `$${KEY_VARIABLE}`;
  const curl = (path: string) => `curl -H "x-api-key: ${key}" "${f.url}${path}"`;
  const network = encodeURIComponent(f.network);
  return [
    curl(`/v0/getLatestUserOps?network=${network}&first=3`),
    curl(`/v0/getUserOp?network=${network}&hash=${f.userOpHash ?? '<a userOpHash from the list above>'}`),
    curl(`/v0/getDailyMetrics?network=${network}&noOfDays=7`),
  ];
}

export function banner(f: BannerFacts): string {
  const keyLines = f.newKey
    ? [`  API key      ${f.newKey}   (named "demo"; shown only now, stored hashed)`]
    : [
        `  API key      the one shown at the first start (keys are stored hashed): export ${KEY_VARIABLE}=<your key>`,
        f.sharedStore
          ? '               another one: npx opscan keys create NAME'
          : '               another one: stop opscan (Ctrl-C), run npx opscan keys create NAME, start again',
      ];
  return [
    '',
    `  opscan is running: ${f.network}${f.demoChain ? ' (a local chain with demo traffic)' : ''}, store ${f.store}`,
    '',
    `  Status page  ${f.url}/`,
    `  API docs     ${f.url}/docs   (OpenAPI: ${f.url}/v0/openapi.json, GraphQL: ${f.url}/subgraphs/name/${f.network})`,
    ...keyLines,
    rpcLine(f),
    '',
    '  Try:',
    ...exampleCommands(f).map((c) => `    ${c}`),
    '',
    '  Ctrl-C stops everything; npm start again resumes from the same data.',
    '',
  ].join('\n');
}
