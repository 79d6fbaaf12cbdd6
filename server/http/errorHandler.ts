import type { ErrorRequestHandler } from 'express';
import type { Logger } from '../../shared/log.js';
import { errorBody, errorHeaders, HTTP_STATUS, toAppError } from './errors.js';

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
      res.status(status).json({ message: (error as Error).message || 'Bad request', code: 'BAD_REQUEST' });
      return;
    }
    const appError = toAppError(error);
    if (appError.code === 'INTERNAL_SERVER_ERROR') {
      log.error({ err: appError.cause ?? appError, path: req.path }, 'request failed');
    }
    res.status(HTTP_STATUS[appError.code]).set(errorHeaders(appError)).json(errorBody(appError));
  };
}
