import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BREAK, execute, GraphQLError, printSchema, visit, type DocumentNode, type ExecutionArgs } from 'graphql';
import { createHandler } from 'graphql-http';
import type { NetworkConfig } from '../../shared/config.js';
import { isDatabaseUnavailable, withDeadline, type Queryable } from '../../shared/db/client.js';
import { AppError } from '../../shared/errors.js';
import { findNetwork } from '../../shared/networks.js';
import { admit, allowedNetworks, assertNetworkAllowed } from '../access.js';
import { createContext, type Ctx, type Deps } from '../context.js';
import { HTTP_STATUS } from '../http/errors.js';
import { rateLimitHeaders } from '../http/rateLimitHeaders.js';
import { parseQuery, rowBudgetError, validateQuery } from './limits.js';
import { newGraphqlContext, type GraphqlContext } from './resolvers.js';
import { executionSchema, subgraphSchema } from './schema.js';
import { requestIdOf } from '../rest/router.js';

/**
 * The subgraph-style GraphQL endpoint of each served network, where The Graph's clients post:
 * `POST /subgraphs/name/<network>` with the key in `x-api-key`, or `POST /api/<key>/subgraphs/name/<network>`
 * (the key in the path, as the hosted gateway takes it), and the schema at
 * `GET /subgraphs/name/<network>/schema.graphql`. A GET at the endpoint answers `?query=` (with
 * `variables=`, `operationName=`) as a POST would, and a browser asking for HTML gets the query page,
 * as graph-node serves GraphiQL at the same URL. Every answer, refusals included, is a GraphQL
 * body `{errors: [{message, locations?, path?}]}`.
 */

const SUBGRAPH_PATH = /^\/(?:api\/[^/]+\/)?subgraphs\/name\/[^/]+(?:\/schema\.graphql)?\/?$/;

const SDL = printSchema(subgraphSchema);

/** The query page (public/): static files, nothing fetched from another host. */
const PAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'public');
const PAGE_ASSETS = '/subgraphs/query-page';

/** GraphiQL, its explorer plugin and React, as their packages ship them for a page without a build step. */
const packageDir = (name: string) => dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
const GRAPHIQL_FILES = new Map(
  Object.entries({
    'react.js': join(packageDir('react'), 'umd/react.production.min.js'),
    'react-dom.js': join(packageDir('react-dom'), 'umd/react-dom.production.min.js'),
    'graphiql.js': join(packageDir('graphiql'), 'graphiql.min.js'),
    'graphiql.css': join(packageDir('graphiql'), 'graphiql.min.css'),
    'explorer.js': join(packageDir('@graphiql/plugin-explorer'), 'dist/index.umd.js'),
    'explorer.css': join(packageDir('@graphiql/plugin-explorer'), 'dist/style.css'),
  }),
);

const errorsBody = (message: string, extensions?: Record<string, unknown>) => ({
  errors: [{ message, ...(extensions ? { extensions } : {}) }],
});

/** The served network a path names (client spellings accepted), or undefined. */
function servedNetwork(deps: Deps, name: string): NetworkConfig | undefined {
  const canonical = findNetwork(name)?.name ?? name;
  return deps.config.networks.find((n) => n.name === canonical);
}

/**
 * Where a query reads: a read replica at or past what this process has already answered from
 * (server/readReplicas.ts, as for /v0), else the primary. `_meta` then answers the head that
 * replica has replayed, consistent with the rows it returns.
 */
async function readerFor(deps: Deps, network: NetworkConfig): Promise<Queryable> {
  const replicas = deps.services.readReplicas;
  if (!replicas) return deps.db;
  return (await replicas.choose({ db: deps.db, indexer: deps.services.indexer }, [network])).db;
}

/** Unexpected failures (bugs, the database) are logged and answered without their details. */
function maskUnexpected(deps: Deps) {
  return (error: Readonly<GraphQLError | Error>): GraphQLError | Error => {
    if (!(error instanceof GraphQLError) || !error.originalError || error.originalError instanceof GraphQLError) return error;
    const cause = error.originalError as { code?: unknown };
    // PostgreSQL cancelled the statement at the web pool's statement_timeout: busy, not broken; or the
    // database (a replica that went away, an outage) is unreachable: the client should try again.
    const message =
      cause.code === '57014'
        ? 'The query took too long; ask for fewer rows or a narrower filter.'
        : isDatabaseUnavailable(error.originalError)
          ? 'The database is unreachable right now; try again shortly.'
          : 'Internal error';
    if (message === 'Internal error') deps.log.error({ err: error.originalError, path: error.path }, 'graphql resolver failed');
    return new GraphQLError(message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path });
  };
}

/** Whether a document reads the schema itself (`__schema`, `__type`), per parsed document. */
const readsSchema = new WeakMap<DocumentNode, boolean>();

/** The schema a validated document runs against: the execution schema, or the published one for introspection. */
function schemaToRun(document: DocumentNode) {
  let introspects = readsSchema.get(document);
  if (introspects === undefined) {
    introspects = false;
    visit(document, {
      Field(node) {
        if (node.name.value !== '__schema' && node.name.value !== '__type') return undefined;
        introspects = true;
        return BREAK;
      },
    });
    readsSchema.set(document, introspects);
  }
  return introspects ? subgraphSchema : executionSchema;
}

export function createSubgraphRoutes(deps: Deps): [express.Router, ErrorRequestHandler] {
  const handle = createHandler<Request, GraphqlContext, GraphqlContext>({
    schema: subgraphSchema,
    context: (req) => req.context,
    parse: (source) => parseQuery(typeof source === 'string' ? source : source.body),
    validate: validateQuery,
    execute: (args: ExecutionArgs) => {
      const overBudget = rowBudgetError(args);
      return overBudget ? { errors: [overBudget] } : execute({ ...args, schema: schemaToRun(args.document) });
    },
    formatError: maskUnexpected(deps),
  });

  async function answer(req: Request, res: Response): Promise<void> {
    const ctx = createContext(deps, {
      // The access log's id (the client's x-request-id when sane), as the other transports answer it.
      requestId: requestIdOf(req),
      headers: { apiKey: (req.params.key as string | undefined) ?? req.get('x-api-key'), authorization: req.get('authorization') },
      clientIp: () => req.ip ?? 'unknown',
    });
    // The key's lookup, the reader's choice and every resolver's query share the request's database deadline.
    await withDeadline(ctx.deadline, () => answerWith(ctx, req, res));
  }

  async function answerWith(ctx: Ctx, req: Request, res: Response): Promise<void> {
    res.setHeader('x-request-id', ctx.requestId);
    res.setHeader('cache-control', 'no-store');
    const network = servedNetwork(deps, String(req.params.network));
    if (!network) {
      const served = deps.config.networks.map((n) => n.name).join(', ');
      res.status(404).json(errorsBody(`No subgraph "${String(req.params.network)}"; served networks: ${served}`, { code: 'NOT_FOUND' }));
      return;
    }
    // Metered as one call of the endpoint `graphql` on the subgraph's network, whatever it answers.
    res.once('finish', () => {
      if (ctx.apiKey) deps.services.usage.record(ctx.apiKey.id, 'graphql', network.name, res.statusCode);
    });
    try {
      // The key, its scope and the rate limit, the step every transport runs (server/access.ts); one call per request.
      const { admitted, plan } = await admit(ctx, { capability: 'read' });
      await admitted;
      assertNetworkAllowed(allowedNetworks(ctx.apiKey, plan), network.name);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      res.set(rateLimitHeaders(ctx.rateLimit, error));
      res.status(HTTP_STATUS[error.code]).json(errorsBody(error.message, { code: error.code }));
      return;
    }
    res.set(rateLimitHeaders(ctx.rateLimit));
    const [body, init] = await handle({
      method: req.method,
      url: req.originalUrl,
      // graph-node answers every GraphQL error (syntax, validation, depth and alias limits) with HTTP 200 and
      // JSON, whatever the client accepts; graphql-http does so only for `application/json` (and 400 for
      // `application/graphql-response+json`, which graphql-request asks for first).
      headers: { get: (name: string) => (name.toLowerCase() === 'accept' ? 'application/json' : (req.get(name) ?? null)) },
      body: (req.body as Record<string, unknown> | undefined) ?? null,
      raw: req,
      context: newGraphqlContext(await readerFor(deps, network), network),
    });
    res.status(init.status).set(init.headers ?? {});
    if (body !== null) res.send(body);
    else res.json(errorsBody(init.statusText));
  }

  const router = express.Router();
  router.get('/subgraphs/name/:network/schema.graphql', (req, res) => {
    if (!servedNetwork(deps, String(req.params.network))) {
      res.status(404).json(errorsBody(`No subgraph "${String(req.params.network)}"`, { code: 'NOT_FOUND' }));
      return;
    }
    res.type('text/plain; charset=utf-8').send(SDL);
  });
  router.post('/subgraphs/name/:network', answer);
  router.post('/api/:key/subgraphs/name/:network', answer);

  /** GET: a query in the URL is answered; a browser without one gets the query page (it reads the page's own URL). */
  const answerOrPage: express.RequestHandler = async (req, res) => {
    if (req.query.query !== undefined || req.accepts(['application/json', 'text/html']) !== 'text/html') return answer(req, res);
    if (!servedNetwork(deps, String(req.params.network))) {
      res.status(404).json(errorsBody(`No subgraph "${String(req.params.network)}"`, { code: 'NOT_FOUND' }));
      return;
    }
    res.setHeader('cache-control', 'no-cache');
    res.sendFile(join(PAGE_DIR, 'index.html'));
  };
  router.get('/subgraphs/name/:network', answerOrPage);
  router.get('/api/:key/subgraphs/name/:network', answerOrPage);
  router.use(PAGE_ASSETS, express.static(PAGE_DIR, { maxAge: '5m', index: false }));
  router.get(`${PAGE_ASSETS}/vendor/:file`, (req, res, next) => {
    const file = GRAPHIQL_FILES.get(String(req.params.file));
    if (!file) return next();
    res.sendFile(file, { maxAge: '1d' });
  });

  /** A body the JSON parser refused (malformed, too large) is answered as a GraphQL error, like any other. */
  const bodyErrors: ErrorRequestHandler = (error, req, res, next) => {
    const status = (error as { status?: unknown }).status;
    if (!SUBGRAPH_PATH.test(req.path) || typeof status !== 'number' || status < 400 || status >= 500) return next(error);
    res.status(status).json(errorsBody(`Invalid request body: ${(error as Error).message}`, { code: 'BAD_REQUEST' }));
  };
  return [router, bodyErrors];
}
