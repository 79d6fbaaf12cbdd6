import { z } from 'zod';
import type { Endpoint } from '../endpoints/defineEndpoint.js';
import { endpoints } from '../endpoints/index.js';
import type { Dialect } from '../dialects/dialect.js';

/**
 * The OpenAPI 3.1 document of a dialect (/v0, /jiffyscan/v0), generated from the same zod schemas the endpoints validate and
 * answer with (zod's JSON Schema output is 2020-12, which OpenAPI 3.1 uses as is), each answer in
 * the dialect's own shape. Models with an id (`.meta({ id })`) become components.
 */

/** The JSON body of every error answer (server/http/errors.ts errorBody). */
export const errorSchema = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What went wrong, for humans.' },
    code: {
      type: 'string',
      enum: [
        'BAD_REQUEST',
        'UNAUTHORIZED',
        'FORBIDDEN',
        'NOT_FOUND',
        'CONFLICT',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'TOO_MANY_REQUESTS',
        'BAD_GATEWAY',
        'SERVICE_UNAVAILABLE',
        'INTERNAL_SERVER_ERROR',
      ],
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
  '413': 'Payload Too Large: a request body over 64 KB.',
  '429': 'Too many requests: see Retry-After.',
  '502': 'Bad Gateway: a live chain read failed.',
};

export type JsonSchema = Record<string, unknown>;

/** Each field of an object schema as an OpenAPI parameter in `where` (its JSON Schema, required unless optional). */
export function parametersOf(input: z.ZodType, where: 'query' | 'path' = 'query'): JsonSchema[] {
  if (!(input instanceof z.ZodObject)) return [];
  return Object.entries(input.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const { $schema: _, description, ...schema } = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    return {
      name,
      in: where,
      required: where === 'path' || !field.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
    };
  });
}

export function buildOpenApiDocument(dialect: Dialect): JsonSchema {
  const all = Object.entries(endpoints) as Array<[keyof typeof endpoints, Endpoint]>;
  const outputOf = (name: keyof typeof endpoints, endpoint: Endpoint): z.ZodType => dialect.presentations[name]?.output ?? endpoint.output;
  // One generation for every output, so shared models become one component each.
  const combined = z.toJSONSchema(z.object(Object.fromEntries(all.map(([name, e]) => [name, outputOf(name, e)]))), {
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
    info: { title: dialect.title, version: '1.0', description: dialect.description },
    servers: [{ url: dialect.basePath }],
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
