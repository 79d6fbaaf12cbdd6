import { z } from 'zod';
import { errorSchema, parametersOf, type JsonSchema } from '../http/openapi.js';
import { adminOperations, type AdminOperation } from './operations/index.js';

/**
 * The admin API's OpenAPI 3.1 document (/admin/v1/openapi.json), generated from the operations'
 * own zod schemas like /v0's: path fields become path parameters, the other fields query
 * parameters (GET) or the JSON body; answers with an id (`.meta({ id })`) become components.
 */

export const ADMIN_BASE_PATH = '/admin/v1';

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'Bad Request: a field is missing or invalid (`param` names it).',
  '401': 'Unauthorized: no ADMIN_TOKEN bearer token, or a wrong one (API keys are never accepted here).',
  '404': 'Not found: no such key or plan (`param` names the field).',
  '409': 'Conflict: the name or key exists already, the key is revoked, or the plan is in use.',
  '429': 'Too many failed authentications from this address: see Retry-After.',
};

/** The `{name}` segments of an operation's path. */
export const pathFieldsOf = (op: AdminOperation): string[] => [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

export function buildAdminOpenApiDocument(): JsonSchema {
  const all = Object.entries(adminOperations) as Array<[string, AdminOperation]>;
  const relink = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('#/$defs/', '#/components/schemas/')) as T;
  // One generation for every answer, so shared models (ApiKey, Plan) become one component each.
  const outputs = z.toJSONSchema(z.object(Object.fromEntries(all.map(([name, op]) => [name, op.output]))), {
    io: 'output',
    unrepresentable: 'any',
  }) as { properties: Record<string, JsonSchema>; $defs?: Record<string, JsonSchema> };

  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [name, op] of all) {
    const inPath = pathFieldsOf(op);
    const fields = Object.entries(op.input.shape);
    const pathPart = z.object(Object.fromEntries(fields.filter(([f]) => inPath.includes(f))));
    const rest = z.object(Object.fromEntries(fields.filter(([f]) => !inPath.includes(f))));
    const restFields = Object.keys(rest.shape);
    const body =
      op.method !== 'GET' && restFields.length > 0
        ? (() => {
            const { $schema: _, ...schema } = z.toJSONSchema(rest, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
            return { required: Array.isArray(schema.required) && schema.required.length > 0, content: { 'application/json': { schema } } };
          })()
        : undefined;
    const operation: JsonSchema = {
      operationId: name,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      parameters: [...parametersOf(pathPart, 'path'), ...(op.method === 'GET' ? parametersOf(rest, 'query') : [])],
      ...(body ? { requestBody: body } : {}),
      responses: {
        [String(op.status ?? 200)]: {
          description: op.status === 201 ? 'Created' : 'Success',
          content: { 'application/json': { schema: relink(outputs.properties[name]) } },
        },
        ...Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([status, description]) => [
            status,
            { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          ]),
        ),
      },
    };
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'opscan admin API',
      version: '1.0',
      description:
        'Operator API: API keys, plans and usage. Every call needs `Authorization: Bearer <ADMIN_TOKEN>` (the deployment setting); API keys are never accepted. ' +
        'Without ADMIN_TOKEN the admin API is off (404). Answers are never cached (`cache-control: no-store`).',
    },
    servers: [{ url: ADMIN_BASE_PATH }],
    tags: [{ name: 'keys' }, { name: 'plans' }, { name: 'usage' }],
    security: [{ AdminToken: [] }],
    paths,
    components: {
      securitySchemes: { AdminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN setting.' } },
      schemas: { ...relink(outputs.$defs ?? {}), Error: errorSchema },
    },
  };
}
