/** A refusal or failure of an opscan call: the HTTP status and the error body's code, message and parameter. */
export class OpscanError extends Error {
  /** HTTP status (200 for GraphQL errors, which The Graph's dialect answers with 200). */
  readonly status: number;
  /** opscan's error code (BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, TOO_MANY_REQUESTS, …; GRAPHQL for GraphQL errors). */
  readonly code: string;
  /** The request parameter at fault, when the server names one. */
  readonly param: string | undefined;
  /** Seconds the server asked to wait (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(init: { status: number; code: string; message: string; param?: string; retryAfter?: number }) {
    super(init.message);
    this.name = 'OpscanError';
    this.status = init.status;
    this.code = init.code;
    this.param = init.param;
    this.retryAfter = init.retryAfter;
  }
}
