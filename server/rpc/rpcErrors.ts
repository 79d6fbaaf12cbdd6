import type { AppError } from '../../shared/errors.js';

/** JSON-RPC 2.0's error codes, EIP-1474's for a refused rate, and one for a refused key. */
export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  limitExceeded: -32005,
  /** Refused before any item is read: no key, a key that may not call the RPC or read the network. */
  unauthorized: -32001,
} as const;

/** A failure of the route itself (never an item's), answered before routing: a JSON-RPC error rather than the API's error page. */
export function rpcErrorBody(error: AppError): object {
  const code = error.code === 'PAYLOAD_TOO_LARGE' || error.code === 'BAD_REQUEST' ? RPC_ERRORS.invalidRequest : RPC_ERRORS.internal;
  return { jsonrpc: '2.0', id: null, error: { code, message: error.message } };
}
