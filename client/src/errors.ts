/**
 * What went wrong, by who answered:
 * - `network`: no answer (connection refused or reset, DNS, TLS);
 * - `timeout`: no answer within the client's timeout;
 * - `aborted`: the caller's AbortSignal fired;
 * - `http`: an HTTP status without opscan's error body (a proxy's or load balancer's page, a wrong URL), or an answer that is not JSON;
 * - `api`: opscan's own refusal, with its code, message and parameter (GraphQL errors included).
 */
export type OpscanErrorKind = 'network' | 'timeout' | 'aborted' | 'http' | 'api';

/** Every failure of an opscan call: its kind, and what is known of it (HTTP status, opscan's error code and parameter). */
export class OpscanError extends Error {
  readonly kind: OpscanErrorKind;
  /** HTTP status when there was an answer (200 for GraphQL errors, which The Graph's dialect answers with 200). */
  readonly status: number | undefined;
  /**
   * opscan's error code (BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, TOO_MANY_REQUESTS, …; GRAPHQL for GraphQL
   * errors); for the other kinds NETWORK, TIMEOUT, ABORTED, or HTTP_<status>.
   */
  readonly code: string;
  /** The request parameter at fault, when the server names one. */
  readonly param: string | undefined;
  /** Seconds the server asked to wait (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(init: {
    kind: OpscanErrorKind;
    status?: number;
    code: string;
    message: string;
    param?: string;
    retryAfter?: number;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.name = 'OpscanError';
    this.kind = init.kind;
    this.status = init.status;
    this.code = init.code;
    this.param = init.param;
    this.retryAfter = init.retryAfter;
  }
}
