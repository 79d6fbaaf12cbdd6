import type { ErrorRequestHandler } from 'express';
import type { Logger } from '../../shared/log.js';
import { AppError } from '../../shared/errors.js';
import { noteErrorAnswer } from './accessLog.js';
import { errorBody, errorHeaders, HTTP_STATUS, toAppError } from './errors.js';
import { MAX_BODY_BYTES } from './requestGuards.js';

/** A body the JSON parser refused: too large, in an unsupported charset, or malformed. */
function bodyParserError(status: number, message: string): AppError {
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES / 1024} KB`);
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', message || 'Unsupported body encoding');
  return new AppError('BAD_REQUEST', message || 'Bad request');
}

/**
 * Last Express middleware: every error becomes JSON `{message, code, param?}` with the mapped
 * status. Express 5 forwards rejected promises here. Malformed JSON bodies and oversized requests
 * (body-parser errors carry a 4xx `status`) stay 4xx; only our own bugs are 500s, and their cause is
 * logged, never returned.
 */
export function createErrorHandler(log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const status = (error as { status?: number }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const appError = bodyParserError(status, (error as Error).message);
      res.status(HTTP_STATUS[appError.code]).json(errorBody(appError));
      return;
    }
    const appError = toAppError(error);
    noteErrorAnswer(req, appError);
    if (appError.code === 'INTERNAL_SERVER_ERROR') {
      log.error({ err: appError.cause ?? appError, path: req.path }, 'request failed');
    }
    res.status(HTTP_STATUS[appError.code]).set(errorHeaders(appError)).json(errorBody(appError));
  };
}
