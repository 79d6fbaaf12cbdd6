import { OpscanError } from './errors.js';

/** How a client reaches opscan. */
export type OpscanClientOptions = {
  /** Base URL of the opscan web process, e.g. `https://opscan.example.com`. */
  url: string;
  apiKey: string;
  /** Retries of a call refused with 429, each after the server's Retry-After (default 2). */
  maxRetries?: number;
  /** Longest wait honoured before a retry, in seconds (default 30): a longer Retry-After fails at once. */
  maxRetryAfterSeconds?: number;
  /** The fetch to use (default: the global one). */
  fetch?: Fetch;
};

/** What the client asks of `fetch` (the global one of Node ≥ 18 and browsers has it), spelled out so that its types need no DOM or Node lib. */
export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => Promise<FetchResponse>;
export type FetchResponse = {
  ok: boolean;
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  json(): Promise<unknown>;
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The JSON answer of one call, retried after Retry-After while the server answers 429. */
export async function requestJson(options: OpscanClientOptions, path: string, init: { method: string; body?: string }): Promise<unknown> {
  const doFetch: Fetch = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 2;
  const maxWait = options.maxRetryAfterSeconds ?? 30;
  const headers = { accept: 'application/json', 'x-api-key': options.apiKey, ...(init.body ? { 'content-type': 'application/json' } : {}) };
  for (let attempt = 0; ; attempt++) {
    const res = await doFetch(`${options.url.replace(/\/+$/, '')}${path}`, { ...init, headers });
    if (res.ok) return res.json();
    const error = await toError(res);
    const retryable = res.status === 429 && error.retryAfter !== undefined && error.retryAfter <= maxWait && attempt < maxRetries;
    if (!retryable) throw error;
    await sleep(error.retryAfter * 1000);
  }
}

async function toError(res: FetchResponse): Promise<OpscanError> {
  const text = await res.text();
  let body: ErrorBody = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not JSON (a proxy's page): the status says what happened.
  }
  const graphqlError = body.errors?.[0];
  const retryAfter = Number(res.headers.get('retry-after'));
  return new OpscanError({
    status: res.status,
    code: firstString(body.code, graphqlError?.extensions?.code) ?? `HTTP_${res.status}`,
    message: firstString(body.message, graphqlError?.message) ?? (text.slice(0, 200) || res.statusText),
    param: typeof body.param === 'string' ? body.param : undefined,
    retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  });
}
