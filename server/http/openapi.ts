import { z } from 'zod';
import type { Endpoint } from '../endpoints/defineEndpoint.js';
import { endpoints } from '../endpoints/index.js';

/**
 * The OpenAPI 3.1 document of /v0, generated from the same zod schemas the endpoints validate and
 * answer with (zod's JSON Schema output is 2020-12, which OpenAPI 3.1 uses as is). Models with an
 * id (`.meta({ id })` in shared/models) become components.
 */

const API_DESCRIPTION = `Read-only ERC-4337 explorer data (user operations, bundles, bundlers, paymasters, factories,
accounts, daily metrics, address activity) plus webhook management.

Every endpoint is \`GET /v0/<name>\` with query parameters (webhook mutations also take POST or DELETE), and the same
procedure \`<name>\` over tRPC at \`/trpc\` (input = the same parameters as JSON). Send the API key in \`x-api-key\`
(or as the password of HTTP Basic credentials); \`searchEntry\` needs none.

Conventions: addresses and hashes are accepted in any case and answered in lower case; gas, wei and counts are
decimal strings. Lists take \`first\` (1–100, default 10) and \`skip\` (0–10000, default 0) and answer newest first
(top lists: by count, then address); no match is 200 with an empty list. A single missing thing is 404.
\`network\` accepts the names of getNetworks and the spellings clients use (\`baseSepolia\`, \`Base\`, \`OPEN_CAMPUS_TEST\`);
a network this server does not index is a 400 that lists the ones it does.

Envelopes: where clients read another key than the spec (\`bundlers\` on getTopBundlers, \`bundlerDetails\` on
getBundlerActivity) both keys are answered. getAddressTransactions, getAddressNFTTransfers, getAddressBalances and
getAddressERC20Transfers answer top-level arrays as the spec defines them (some clients expect an object envelope: the
spec wins).

Prices (\`quote_rate\`, \`pretty_quote\`, \`value_quote\`, \`gas_quote\`, \`gas_quote_rate\`, \`pretty_*\`) come from the
price source the deployment configures (PRICE_SOURCE_URL); without one they are null.

Errors are JSON \`{message, code, param?}\`: 400 BAD_REQUEST names the parameter and what it accepts, 401 no key,
403 unknown or revoked key, 404 NOT_FOUND, 429 TOO_MANY_REQUESTS (with Retry-After and RateLimit headers),
502 BAD_GATEWAY when a live chain read fails.`;

const errorSchema = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What went wrong, for humans.' },
    code: {
      type: 'string',
      enum: ['BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'TOO_MANY_REQUESTS', 'BAD_GATEWAY', 'SERVICE_UNAVAILABLE', 'INTERNAL_SERVER_ERROR'],
    },
    param: { type: 'string', description: 'The parameter at fault.' },
  },
  required: ['message', 'code'],
};

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'Bad Request: a parameter is missing or invalid (`param` names it).',
  '401': 'Unauthorized: no API key was sent.',
  '403': 'Invalid API Key: the key is unknown or revoked.',
  '404': 'Not found.',
  '429': 'Too many requests: see Retry-After.',
  '502': 'Bad Gateway: a live chain read failed.',
};

type JsonSchema = Record<string, unknown>;

function parametersOf(input: z.ZodType): JsonSchema[] {
  if (!(input instanceof z.ZodObject)) return [];
  return Object.entries(input.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const { $schema: _, description, ...schema } = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    return {
      name,
      in: 'query',
      required: !field.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
    };
  });
}

export function buildOpenApiDocument(): JsonSchema {
  const all = Object.entries(endpoints) as Array<[string, Endpoint]>;
  // One generation for every output, so shared models become one component each.
  const combined = z.toJSONSchema(z.object(Object.fromEntries(all.map(([name, e]) => [name, e.output]))), {
    io: 'output',
    cycles: 'ref',
    unrepresentable: 'any',
  }) as { properties: Record<string, JsonSchema>; $defs?: Record<string, JsonSchema> };
  const relink = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('#/$defs/', '#/components/schemas/')) as T;

  const paths: Record<string, JsonSchema> = {};
  for (const [name, endpoint] of all) {
    const operation: JsonSchema = {
      operationId: name,
      summary: endpoint.summary,
      ...(endpoint.description ? { description: endpoint.description } : {}),
      tags: [endpoint.tag],
      security: endpoint.auth === 'none' ? [] : [{ ApiKey: [] }, { BasicAuth: [] }],
      parameters: parametersOf(endpoint.input),
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: relink(combined.properties[name]) } } },
        ...Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([status, description]) => [
            status,
            { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          ]),
        ),
      },
    };
    paths[`/${name}`] = Object.fromEntries((endpoint.methods ?? ['GET']).map((m) => [m.toLowerCase(), operation]));
  }

  return {
    openapi: '3.1.0',
    info: { title: 'opscan Explorer Data API', version: '1.0', description: API_DESCRIPTION },
    servers: [{ url: '/v0' }],
    tags: [...new Set(all.map(([, e]) => e.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        BasicAuth: { type: 'http', scheme: 'basic', description: 'The API key as the password (any user name).' },
      },
      schemas: { ...relink(combined.$defs ?? {}), Error: errorSchema },
    },
  };
}
