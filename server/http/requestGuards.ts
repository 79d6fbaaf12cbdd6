import { maxHeaderSize, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type express from 'express';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { AppError } from '../../shared/errors.js';
import { errorBody, HTTP_STATUS, trpcErrorData } from './errors.js';
import { rpcErrorBody } from '../rpc/rpcErrors.js';

/**
 * Limits checked before a request body or a tRPC input is parsed, so that what a caller sends is a
 * clear 4xx and never reaches code that would choke on it (a JSON value nested thousands deep
 * overflows the stack of the recursive walks libraries make over parsed input).
 */

/** The largest request body any route reads (webhook bodies, tRPC mutations and batches, GraphQL queries). */
export const MAX_BODY_BYTES = 64 * 1024;

/** Deeper than any input of ours: tRPC batches nest 3 levels, webhook bodies 1, GraphQL variables a few. */
export const MAX_JSON_DEPTH = 32;
/** Calls in one tRPC batch. */
export const MAX_TRPC_BATCH = 10;

/** Whether JSON text nests arrays/objects deeper than `limit`: a scan that skips strings, without parsing. */
export function jsonNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

const tooDeep = () => `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;

/** express.json's `verify` hook: a body nested too deep is a 400 before it is parsed. */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  if (jsonNestsDeeperThan(body.toString('utf8'), MAX_JSON_DEPTH)) throw Object.assign(new Error(tooDeep()), { status: 400 });
}

/** A tRPC error answer's body, as tRPC formats one (the same `data` as our error formatter gives). */
const trpcErrorBody = (error: AppError) => ({
  error: { message: error.message, code: TRPC_ERROR_CODES_BY_KEY[error.code], data: trpcErrorData(error) },
});

function trpcError(res: express.Response, error: AppError): void {
  res.status(HTTP_STATUS[error.code]).json(trpcErrorBody(error));
}

/** The body of an error answered before routing, in the shape the path's clients read (tRPC, GraphQL, or REST). */
function earlyErrorBody(req: express.Request, error: AppError): object {
  if (req.path.startsWith('/trpc/')) return trpcErrorBody(error);
  if (req.path.startsWith('/rpc/')) return rpcErrorBody(error);
  if (/\/subgraphs\//.test(req.path)) return { errors: [{ message: error.message, extensions: { code: error.code } }] };
  return errorBody(error);
}

/** How much of a refused body is read and dropped (a lingering close), and for how long at most. */
export const DISCARD_MAX_BYTES = 16 * 1024 * 1024;
export const DISCARD_MAX_MS = 5_000;

/**
 * Reads and drops the rest of a refused body, then calls `done`; a client sending more than
 * DISCARD_MAX_BYTES, or for longer than DISCARD_MAX_MS, is cut off there (`done`, then the
 * connection is destroyed). Only counted, never kept.
 */
export function discardBody(req: IncomingMessage, done: () => void): void {
  let read = 0;
  let finished = false;
  const finish = (cut: boolean) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    done();
    if (cut) req.socket.destroy();
  };
  const timer = setTimeout(() => finish(true), DISCARD_MAX_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > DISCARD_MAX_BYTES) finish(true);
  });
  req.once('end', () => finish(false));
  req.once('close', () => finish(false));
}

/**
 * A lingering close, as servers do it: the client of a refused body is usually still sending it
 * when the answer goes out. Closing the connection then, with its bytes still arriving, makes the
 * kernel answer them with a reset, which may reach the client before it has read the answer (Node's
 * http client reports EPIPE and never sees the 413). Node closes right after a response ends when
 * the client asked for `connection: close` (an agent without keep-alive), so the answer is sent
 * whole (status, headers, a body of declared length: the client can read it at once) but ended
 * only once the rest of the body is read and dropped (`discardBody`); the connection then closes
 * or stays usable, as the client asked.
 */
function refuseBody(req: express.Request, res: express.Response, error: AppError): void {
  const body = JSON.stringify(earlyErrorBody(req, error));
  res.writeHead(HTTP_STATUS[error.code], { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.write(body);
  discardBody(req, () => res.end());
}

/**
 * First of all middleware: a body declared larger than MAX_BODY_BYTES is a 413 whatever its type,
 * route and method, before anything parses it; the rest of it is read and dropped (`refuseBody`),
 * so the client reads the 413. The JSON parser enforces the same limit on bodies sent without a
 * length (it reads such a body to its end before answering, within the server's 30 s request timeout).
 */
export const bodySizeGuard: express.RequestHandler = (req, res, next) => {
  const length = Number(req.get('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) {
    refuseBody(req, res, new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES / 1024} KB`));
    return;
  }
  next();
};

/**
 * In front of the tRPC adapter: a body that is not JSON, a batch of more than MAX_TRPC_BATCH calls,
 * or a GET input nested too deep is answered here as a JSON tRPC error (the adapter would answer the
 * first two in plain text and overflow its stack on the third).
 */
export const trpcRequestGuard: express.RequestHandler = (req, res, next) => {
  // Only JSON bodies: tRPC would read any other type itself, without our size limit, and answer in plain text.
  if (req.method === 'POST' && !req.is('application/json')) {
    trpcError(res, new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send tRPC calls with content-type: application/json'));
    return;
  }
  const calls = req.query.batch === '1' ? req.path.slice(1).split(',').length : 1;
  if (calls > MAX_TRPC_BATCH) {
    trpcError(res, new AppError('BAD_REQUEST', `A batch may hold at most ${MAX_TRPC_BATCH} calls (got ${calls})`, { param: 'batch' }));
    return;
  }
  const input = req.query.input;
  if (typeof input === 'string' && jsonNestsDeeperThan(input, MAX_JSON_DEPTH)) {
    trpcError(res, new AppError('BAD_REQUEST', `Invalid parameter "input": ${tooDeep()}`, { param: 'input' }));
    return;
  }
  next();
};

/** Node's limit on a request's headers (--max-http-header-size, 16 KB unless changed). */
const headerLimitKb = () => Math.round(maxHeaderSize / 1024);

/**
 * What a request Node's parser refused gets (server 'clientError': headers over the limit, a
 * malformed request, headers that took too long). Node's own answer is a bare 431/400/408 followed
 * by an immediate close; headers over the limit usually arrive faster than that, so the close
 * resets the connection and a client still sending reads ECONNRESET instead of the 431. Here the
 * answer is JSON and the 431 lingers like a refused body (`discardBody`): the connection is
 * half-closed and what the client still sends is read and dropped, up to DISCARD_MAX_BYTES or
 * DISCARD_MAX_MS. The parser gives up at the first byte over the limit, so its bytes are not
 * parsed any more, only counted.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            'Request Header Fields Too Large',
            'REQUEST_HEADER_FIELDS_TOO_LARGE',
            `The request headers are larger than ${headerLimitKb()} KB`,
          ]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'The request did not arrive in time']
          : [400, 'Bad Request', 'BAD_REQUEST', 'Malformed HTTP request'];
    const body = JSON.stringify({ message, code });
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    if (status !== 431) {
      socket.destroy();
      return;
    }
    // The parser is done with this socket: its listener would parse (and fail) again.
    socket.removeAllListeners('data');
    let read = 0;
    const cut = () => socket.destroy();
    const timer = setTimeout(cut, DISCARD_MAX_MS);
    timer.unref();
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > DISCARD_MAX_BYTES) cut();
    });
    socket.once('end', cut);
    socket.once('close', () => clearTimeout(timer));
    socket.end();
    socket.resume();
  });
}
