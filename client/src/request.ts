import { OpscanError } from './errors.js';

/** What the client uses of an AbortSignal, for projects whose types have none (no DOM lib, no Node types). */
export type AbortSignalLike = {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
};

/** The platform's AbortSignal where its types are loaded (the DOM's or Node's), else AbortSignalLike. */
export type PlatformAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : AbortSignalLike;

/** Per call: a signal that cancels it, and a timeout other than the client's. */
export type CallOptions = {
  signal?: PlatformAbortSignal;
  /** Milliseconds one HTTP request may take, its answer read to the end (default: the client's `timeoutMs`). */
  timeoutMs?: number;
};

/** The default of `timeoutMs`. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** How a client reaches opscan. */
export type OpscanClientOptions = {
  /** Base URL of the opscan web process, e.g. `https://opscan.example.com`. */
  url: string;
  apiKey: string;
  /**
   * Milliseconds one HTTP request may take, its answer read to the end (default 30 000); then the call fails with an
   * OpscanError of kind `timeout`. Each retry of a 429 gets its own.
   */
  timeoutMs?: number;
  /** Retries of a call refused with 429, each after the server's Retry-After (default 2). */
  maxRetries?: number;
  /** Longest wait honoured before a retry, in seconds (default 30): a longer Retry-After fails at once. */
  maxRetryAfterSeconds?: number;
  /** The fetch to use (default: the global one). */
  fetch?: Fetch;
};

/** What the client asks of `fetch` (the global one of Node ≥ 18 and browsers has it), spelled out so that its types need no DOM or Node lib. */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: PlatformAbortSignal },
) => Promise<FetchResponse>;
export type FetchResponse = {
  ok: boolean;
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
};

type ErrorBody = {
  message?: unknown;
  code?: unknown;
  param?: unknown;
  errors?: Array<{ message?: unknown; extensions?: { code?: unknown } }>;
};

/** The first of `values` that is a string (error bodies are not ours to trust). */
const firstString = (...values: unknown[]): string | undefined => values.find((v): v is string => typeof v === 'string');

/** What a thrown value says, with the cause fetch hides its reason in (`fetch failed` ← `connect ECONNREFUSED …`). */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  return firstString(cause?.message, cause?.code, (error as { message?: unknown } | null)?.message) ?? String(error);
}

/**
 * `work` given a signal that fires at the caller's abort or after `timeoutMs`; at either the call
 * rejects at once with an OpscanError (`aborted`, `timeout`), whether or not `work` heeds the signal
 * (a `fetch` option that ignores it cannot make a call hang).
 */
function bounded<T>(timeoutMs: number, caller: AbortSignalLike | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const settle = (error?: OpscanError) => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
      if (error) {
        controller.abort(error);
        reject(error);
      }
    };
    const onAbort = () =>
      settle(new OpscanError({ kind: 'aborted', code: 'ABORTED', message: 'The call was aborted', cause: caller?.reason }));
    const timer = setTimeout(
      () => settle(new OpscanError({ kind: 'timeout', code: 'TIMEOUT', message: `No answer within ${timeoutMs} ms` })),
      timeoutMs,
    );
    if (caller?.aborted) return onAbort();
    caller?.addEventListener('abort', onAbort, { once: true });
    work(controller.signal).then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- work's own failure (an OpscanError), passed on as it is
        reject(error);
      },
    );
  });
}

/** The JSON answer of one call, retried after Retry-After while the server answers 429. */
export async function requestJson(
  options: OpscanClientOptions,
  path: string,
  init: { method: string; body?: string },
  call: CallOptions = {},
): Promise<unknown> {
  const doFetch: Fetch = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 2;
  const maxWait = options.maxRetryAfterSeconds ?? 30;
  const timeoutMs = call.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const caller = call.signal as AbortSignalLike | undefined;
  const url = `${options.url.replace(/\/+$/, '')}${path}`;
  const headers = { accept: 'application/json', 'x-api-key': options.apiKey, ...(init.body ? { 'content-type': 'application/json' } : {}) };
  for (let attempt = 0; ; attempt++) {
    const answer = await bounded(timeoutMs, caller, async (signal) => {
      let res: FetchResponse;
      let text: string;
      try {
        res = await doFetch(url, { ...init, headers, signal });
        text = await res.text();
      } catch (error) {
        throw new OpscanError({ kind: 'network', code: 'NETWORK', message: `Cannot reach ${url}: ${describe(error)}`, cause: error });
      }
      return { res, text };
    });
    const { res, text } = answer;
    if (res.ok) return parseAnswer(res, text);
    const error = toError(res, text);
    const retryable = res.status === 429 && error.retryAfter !== undefined && error.retryAfter <= maxWait && attempt < maxRetries;
    if (!retryable) throw error;
    // The wait is the server's, not a request: only the caller's signal cuts it short.
    const wait = error.retryAfter * 1000;
    await bounded(wait + timeoutMs, caller, () => new Promise((resolve) => setTimeout(resolve, wait)));
  }
}

/** A 2xx answer's JSON; one that is not JSON (a wrong URL's page) is an `http` error. */
function parseAnswer(res: FetchResponse, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = `The answer is not JSON: ${text.slice(0, 200)}`;
    throw new OpscanError({ kind: 'http', status: res.status, code: `HTTP_${res.status}`, message, cause: error });
  }
}

/** An answer that is not 2xx: opscan's refusal (`api`) when the body is its error JSON, else an `http` error. */
function toError(res: FetchResponse, text: string): OpscanError {
  let body: ErrorBody = {};
  try {
    body = (JSON.parse(text) as ErrorBody | null) ?? {};
  } catch {
    // Not JSON (a proxy's page): the status says what happened.
  }
  const graphqlError = body.errors?.[0];
  const code = firstString(body.code, graphqlError?.extensions?.code);
  const message = firstString(body.message, graphqlError?.message);
  const retryAfter = Number(res.headers.get('retry-after'));
  return new OpscanError({
    kind: code !== undefined && message !== undefined ? 'api' : 'http',
    status: res.status,
    code: code ?? `HTTP_${res.status}`,
    message: message ?? (text.slice(0, 200) || res.statusText),
    param: typeof body.param === 'string' ? body.param : undefined,
    retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  });
}
