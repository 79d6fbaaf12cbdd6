import type express from 'express';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { AppError } from '../../shared/errors.js';
import { errorBody, HTTP_STATUS } from './errors.js';

/**
 * Limits checked before a request body or a tRPC input is parsed, so that what a caller sends is a
 * clear 4xx and never reaches code that would choke on it (a JSON value nested thousands deep
 * overflows the stack of the recursive walks libraries make over parsed input).
 */

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

/** A tRPC error answer, as tRPC formats one (the same `data` as our error formatter gives). */
function trpcError(res: express.Response, error: AppError): void {
  const status = HTTP_STATUS[error.code];
  res.status(status).json({
    error: { message: error.message, code: TRPC_ERROR_CODES_BY_KEY[error.code], data: { ...errorBody(error), httpStatus: status } },
  });
}

/**
 * In front of the tRPC adapter: a batch of more than MAX_TRPC_BATCH calls, or a GET input nested
 * too deep, is answered here as a JSON tRPC error (the adapter would answer the first as plain text
 * and overflow its stack on the second).
 */
export const trpcRequestGuard: express.RequestHandler = (req, res, next) => {
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
