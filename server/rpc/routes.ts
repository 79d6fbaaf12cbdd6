import express, { type Request, type Response } from 'express';
import type { NetworkConfig } from '../../shared/config.js';
import { withDeadline } from '../../shared/db/client.js';
import type { AppError } from '../../shared/errors.js';
import { allowedNetworks, assertNetworkAllowed, authorize } from '../access.js';
import { createContext, type Ctx, type Deps } from '../context.js';
import { answerJson, answerValue, runEndpoint } from '../endpoints/runEndpoint.js';
import { HTTP_STATUS, toAppError } from '../http/errors.js';
import { rateLimitHeaders } from '../http/rateLimitHeaders.js';
import { jsonNestsDeeperThan, MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../http/requestGuards.js';
import { requestIdOf } from '../rest/router.js';
import type { UpstreamOutcome } from './bundlerUpstream.js';
import { FORWARD, INDEX_METHODS, isIndexMethod } from './methods.js';
import { RPC_ERRORS } from './rpcErrors.js';

/**
 * `POST /rpc/<network>`: JSON-RPC 2.0 (one request or a batch) for wallets' bundler transports.
 * The ERC-4337 read methods are answered from the index (server/rpc/methods.ts); with
 * BUNDLER_URL_<NETWORK> every other method, and a read of an op not indexed yet, goes to that
 * bundler. The key is the `apikey` query parameter (a bundler is configured as one URL) or the
 * x-api-key header; a request without a usable key, or for a network the key may not read, is
 * refused whole (401/403, as /v0 answers), and each item of a batch counts as one call.
 */

/** Items a batch may hold. */
export const MAX_RPC_BATCH = 100;

type Id = string | number | null;
type ErrorObject = { code: number; message: string; data?: unknown };

const errorText = (id: Id, error: ErrorObject) => JSON.stringify({ jsonrpc: '2.0', id, error });
const resultText = (id: Id, resultJson: string | Buffer) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson.toString()}}`;
const outcomeText = (id: Id, outcome: UpstreamOutcome) =>
  'error' in outcome
    ? JSON.stringify({ jsonrpc: '2.0', id, error: outcome.error })
    : resultText(id, JSON.stringify(outcome.result ?? null));

/** An item's answer: its JSON text (null for a notification), and a refusal of its rate (for a lone request's 429). */
type ItemAnswer = { text: string | null; refused?: AppError };

/** A caller's error as a JSON-RPC error object; the details of an internal one stay in the log. */
function rpcErrorOf(ctx: Ctx, error: unknown): { error: ErrorObject; refused?: AppError } {
  const e = toAppError(error);
  switch (e.code) {
    case 'TOO_MANY_REQUESTS':
      return { error: { code: RPC_ERRORS.limitExceeded, message: e.message, data: e.meta }, refused: e };
    case 'BAD_REQUEST':
      return { error: { code: RPC_ERRORS.invalidParams, message: e.message, data: { param: e.param } } };
    case 'UNAUTHORIZED':
    case 'FORBIDDEN':
      return { error: { code: RPC_ERRORS.unauthorized, message: e.message, data: { status: HTTP_STATUS[e.code], param: e.param } } };
    case 'BAD_GATEWAY':
      return { error: { code: RPC_ERRORS.internal, message: e.message } };
    case 'SERVICE_UNAVAILABLE':
      return { error: { code: RPC_ERRORS.internal, message: e.message } };
    default:
      ctx.log.error({ err: e.cause ?? e, requestId: ctx.requestId }, 'rpc call failed');
      return { error: { code: RPC_ERRORS.internal, message: 'Internal error' } };
  }
}

const isId = (id: unknown): id is Id => id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
const HASH = /^0x[0-9a-fA-F]{64}$/;

/** What is wrong with an index method's params (null: nothing), naming the parameter. */
function paramsProblem(kind: 'hash' | 'none', params: unknown): string | null {
  const list = params === undefined ? [] : params;
  if (!Array.isArray(list)) return 'Invalid params: params must be an array';
  if (kind === 'none') return list.length === 0 ? null : 'Invalid params: this method takes no parameters';
  if (list.length !== 1) return `Invalid params: expected [userOpHash], got ${list.length} parameters`;
  return typeof list[0] === 'string' && HASH.test(list[0])
    ? null
    : 'Invalid params: params[0] (userOpHash) must be a 0x-prefixed 32-byte hex hash';
}

async function answerItem(ctx: Ctx, network: NetworkConfig, item: unknown): Promise<ItemAnswer> {
  if (!item || typeof item !== 'object' || Array.isArray(item)) {
    return { text: errorText(null, { code: RPC_ERRORS.invalidRequest, message: 'Invalid request: each request must be a JSON object' }) };
  }
  const { jsonrpc, method, params, id } = item as Record<string, unknown>;
  const idOrNull = isId(id) ? id : null;
  const invalid = (message: string) => ({ text: errorText(idOrNull, { code: RPC_ERRORS.invalidRequest, message }) });
  if (jsonrpc !== '2.0') return invalid('Invalid request: "jsonrpc" must be "2.0"');
  if (typeof method !== 'string' || method.length === 0 || method.length > 200)
    return invalid('Invalid request: "method" must be a method name');
  if (id !== undefined && !isId(id)) return invalid('Invalid request: "id" must be a string, a number or null');
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    return invalid('Invalid request: "params" must be an array or an object');
  }
  // A notification (no id) is carried out and answered with nothing.
  const done = (text: string, refused?: AppError): ItemAnswer => ({ text: id === undefined ? null : text, refused });
  const bundlerUrl = network.bundlerUrl;
  try {
    if (isIndexMethod(method)) {
      const { params: kind, endpoint } = INDEX_METHODS[method];
      const problem = paramsProblem(kind, params);
      if (problem)
        return done(
          errorText(idOrNull, {
            code: RPC_ERRORS.invalidParams,
            message: problem,
            data: { param: kind === 'hash' ? 'params[0]' : 'params' },
          }),
        );
      const input = kind === 'hash' ? { network: network.name, hash: (params as string[])[0] } : { network: network.name };
      const json = answerJson(await runEndpoint(ctx, { name: method, endpoint }, input));
      // An op not indexed yet may be known to the bundler (just included, or still pending). When
      // the bundler cannot say, the index's null stands: a wallet waiting for the receipt polls on.
      if (bundlerUrl && kind === 'hash' && json.length === 4 && json.toString() === 'null') {
        const outcome = await forward(ctx, network, method, params).catch(() => ({ result: null }));
        return done(outcomeText(idOrNull, outcome as UpstreamOutcome));
      }
      return done(resultText(idOrNull, json));
    }
    if (!bundlerUrl) {
      return done(errorText(idOrNull, { code: RPC_ERRORS.methodNotFound, message: `Method not found: ${method} is not answered here` }));
    }
    return done(outcomeText(idOrNull, (await forward(ctx, network, method, params)) as UpstreamOutcome));
  } catch (error) {
    const { error: rpcError, refused } = rpcErrorOf(ctx, error);
    return done(errorText(idOrNull, rpcError), refused);
  }
}

/** A method sent on to the bundler, counted as a call of the key like any other. */
const forward = async (ctx: Ctx, network: NetworkConfig, method: string, params: unknown) =>
  answerValue(await runEndpoint(ctx, { name: 'rpc_forward', endpoint: FORWARD }, { network: network.name, method, params }));

/** The body as parsed JSON, or the JSON-RPC error it is answered with. */
function parseBody(req: Request): { value: unknown } | { error: ErrorObject } {
  const text = typeof req.body === 'string' ? req.body : '';
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH))
    return { error: { code: RPC_ERRORS.parse, message: `Parse error: JSON nested deeper than ${MAX_JSON_DEPTH} levels` } };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: { code: RPC_ERRORS.parse, message: 'Parse error: the body is not JSON' } };
  }
}

function send(res: Response, status: number, body: string, headers: Record<string, string> = {}): void {
  res
    .status(status)
    .set({ ...headers, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
    .send(body);
}

export function createRpcRouter(deps: Deps): express.Router {
  const router = express.Router();
  // The body is read as text: a body that is not JSON is JSON-RPC's parse error, not a 400 page.
  const text = express.text({ type: () => true, limit: MAX_BODY_BYTES });
  router.post('/:network', text, async (req: Request, res: Response) => {
    const network = deps.config.networks.find((n) => n.name === req.params.network);
    if (!network) {
      const served = deps.config.networks.map((n) => n.name).join(', ');
      return send(
        res,
        404,
        errorText(null, {
          code: RPC_ERRORS.invalidRequest,
          message: `No network "${String(req.params.network)}" is served here (served: ${served})`,
        }),
      );
    }
    const apikey = typeof req.query.apikey === 'string' ? req.query.apikey : undefined;
    const ctx = createContext(deps, {
      requestId: requestIdOf(req),
      headers: { apiKey: req.get('x-api-key') || apikey || undefined, authorization: req.get('authorization') || undefined },
      clientIp: () => req.ip ?? 'unknown',
    });
    res.setHeader('x-request-id', ctx.requestId);
    try {
      // The key's lookup shares the request's database deadline with the items' calls (runEndpoint).
      const plan = await withDeadline(ctx.deadline, () => authorize(ctx, 'rpc'));
      assertNetworkAllowed(allowedNetworks(ctx.apiKey, plan), network.name);
    } catch (error) {
      const e = toAppError(error);
      if (ctx.apiKey) ctx.services.usage.record(ctx.apiKey.id, 'rpc', network.name, HTTP_STATUS[e.code]);
      return send(res, HTTP_STATUS[e.code], errorText(null, rpcErrorOf(ctx, e).error));
    }
    const body = parseBody(req);
    if ('error' in body) return send(res, 200, errorText(null, body.error));
    const batch = Array.isArray(body.value);
    const items: unknown[] = batch ? (body.value as unknown[]) : [body.value];
    if (batch && items.length === 0)
      return send(res, 200, errorText(null, { code: RPC_ERRORS.invalidRequest, message: 'Invalid request: an empty batch' }));
    if (items.length > MAX_RPC_BATCH) {
      return send(
        res,
        200,
        errorText(null, {
          code: RPC_ERRORS.invalidRequest,
          message: `Invalid request: a batch holds at most ${MAX_RPC_BATCH} requests (this one has ${items.length})`,
        }),
      );
    }
    const answers = await Promise.all(items.map((item) => answerItem(ctx, network, item)));
    const texts = answers.flatMap((a) => (a.text === null ? [] : [a.text]));
    const refused = answers.find((a) => a.refused)?.refused;
    const headers = rateLimitHeaders(ctx.rateLimit, refused);
    if (texts.length === 0) return void res.status(204).set(headers).end();
    // A lone request refused for its rate is an HTTP 429, which clients' transports retry after Retry-After.
    if (!batch) return send(res, refused ? 429 : 200, texts[0]!, headers);
    send(res, 200, `[${texts.join(',')}]`, headers);
  });
  router.all('/:network', (req, res) => {
    res.setHeader('allow', 'POST');
    send(res, 405, errorText(null, { code: RPC_ERRORS.invalidRequest, message: 'JSON-RPC requests are sent with POST' }));
  });
  return router;
}
