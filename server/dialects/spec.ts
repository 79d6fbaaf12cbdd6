import type { Dialect } from './dialect.js';

/** The spec's shapes (the /v0 Explorer Data API's): `/v0`, answered as the handlers compute them. */

const DESCRIPTION = `Read-only ERC-4337 explorer data (user operations, bundles, bundlers, paymasters, factories,
accounts, daily metrics, address activity) plus webhook management.

Every endpoint is \`GET /v0/<name>\` with query parameters (webhook mutations also take POST or DELETE), and the same
procedure \`<name>\` over tRPC at \`/trpc\` (input = the same parameters as JSON). Send the API key in \`x-api-key\`
(or as the password of HTTP Basic credentials); \`searchEntry\` needs none.

Conventions: addresses and hashes are accepted in any case and answered in lower case; gas, wei and counts are
decimal strings. Lists take \`first\` (1–100, default 10) and \`skip\` (0–10000, default 0) and answer newest first
(top lists: by count, then address); no match is 200 with an empty list. A single missing thing is 404.
\`network\` accepts the names of getNetworks and the spellings clients use (\`baseSepolia\`, \`Base\`, \`OPEN_CAMPUS_TEST\`);
a network this server does not index is a 400 that lists the ones it does. \`network\` is optional everywhere: a lookup
by hash (user operation, bundle transaction, log) without it answers from whichever indexed network holds the hash;
one by address, block or nothing answers for the deployment's default network (DEFAULT_NETWORK, else the only one it
indexes; with several and no default it is a 400 that lists them); getUserOp, getTopFactories, getAddressAggregateData,
getStatusSummary and searchEntry cover every indexed network.

Envelopes: where clients read another key than the spec (\`bundlers\` on getTopBundlers, \`bundlerDetails\` on
getBundlerActivity) both keys are answered. getAddressTransactions, getAddressNFTTransfers, getAddressBalances and
getAddressERC20Transfers answer top-level arrays as the spec defines them (some clients expect an object envelope: the
spec wins).

Prices (\`quote_rate\`, \`pretty_quote\`, \`value_quote\`, \`gas_quote\`, \`gas_quote_rate\`, \`pretty_*\`) come from the
price source the deployment configures (PRICE_SOURCE_URL); without one they are null.

Errors are JSON \`{message, code, param?}\`: 400 BAD_REQUEST names the parameter and what it accepts, 401 no key,
403 unknown or revoked key, 404 NOT_FOUND, 429 TOO_MANY_REQUESTS (with Retry-After and RateLimit headers),
502 BAD_GATEWAY when a live chain read fails.`;

export const specDialect = {
  name: 'spec',
  basePath: '/v0',
  title: 'opscan Explorer Data API',
  description: DESCRIPTION,
  presentations: {},
} satisfies Dialect<Record<never, never>>;
