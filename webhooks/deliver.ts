import { request, type Agent } from 'undici';

/** The outcome of one POST; never thrown for HTTP failures (they are data for the retry policy). */
export type DeliveryResponse = {
  /** null when no response came back (timeout, refused, blocked address, TLS error). */
  status: number | null;
  durationMs: number;
  error: string | null;
  /** First bytes of the response body, for the attempt log. */
  snippet: string | null;
  retryAfter: string | null;
};

/** Responses are read up to this size, then the connection is dropped (a receiver cannot flood us). */
const MAX_RESPONSE_BYTES = 64 * 1024;
const SNIPPET_BYTES = 2048;

export type DeliverRequest = {
  url: string;
  body: string;
  headers: Record<string, string>;
  agent: Agent;
  timeoutMs: number;
};

/**
 * One webhook POST. Redirects are not followed (a 3xx is a failure, and following one would let a
 * receiver point us anywhere); the whole exchange is bounded by `timeoutMs`.
 */
export async function deliver(req: DeliverRequest): Promise<DeliveryResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await request(req.url, {
      method: 'POST',
      dispatcher: req.agent,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'opscan-webhooks/1.0',
        ...req.headers,
      },
      body: req.body,
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    const snippet = await readCapped(res.body);
    const retryAfter = res.headers['retry-after'];
    return {
      status: res.statusCode,
      durationMs: elapsed(),
      error: res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`,
      snippet,
      retryAfter: Array.isArray(retryAfter) ? (retryAfter[0] ?? null) : (retryAfter ?? null),
    };
  } catch (error) {
    return { status: null, durationMs: elapsed(), error: describe(error), snippet: null, retryAfter: null };
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) break;
    }
  } catch {
    // The status is what counts; a body cut short only shortens the snippet.
  } finally {
    if (size >= MAX_RESPONSE_BYTES) body.destroy();
  }
  if (size === 0) return null;
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
  return `${error.message}${cause}`.slice(0, 500);
}
