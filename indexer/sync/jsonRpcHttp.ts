/**
 * The HTTP exchange under RpcClient: one POST of a JSON body, the answer's bytes. Through
 * node:http(s) with keep-alive agents rather than fetch: a Base block's 16 calls cost fetch's
 * WHATWG streams and undici's request machinery ~6 % of the indexer's CPU in a backfill profile.
 */
import http from 'node:http';
import https from 'node:https';

/** Connections are kept open between requests (as fetch keeps them), one pool per protocol. */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Only the host goes in logs and metrics: a provider's URL often holds its API key in the path or query. */
export function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid url)';
  }
}

export type HttpAnswer = { status: number; retryAfter: string | null; body: Buffer };

/**
 * POSTs `body` to `url`; rejects on a network error, when the whole exchange outlasts `timeoutMs`,
 * or when `signal` aborts (the request is abandoned).
 */
export function postJson(url: string, body: string, timeoutMs: number, signal?: AbortSignal): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
    if (!transport) return reject(new Error(`unsupported JSON-RPC URL protocol ${target.protocol}`));
    const request = transport.request(target, {
      method: 'POST',
      agent: agents[target.protocol as keyof typeof agents],
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const timer = setTimeout(() => request.destroy(new Error(`no JSON-RPC answer within ${timeoutMs} ms`)), timeoutMs);
    const abort = (): void => void request.destroy(signal!.reason as Error);
    signal?.addEventListener('abort', abort, { once: true });
    request.once('close', () => signal?.removeEventListener('abort', abort));
    request.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      // A connection closed before the body's end: the answer is not whole.
      response.once('close', () => {
        clearTimeout(timer);
        if (!response.complete) reject(new Error('the JSON-RPC answer was cut off'));
      });
      response.once('end', () => {
        clearTimeout(timer);
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, retryAfter: retryAfter ?? null, body: Buffer.concat(chunks) });
      });
    });
    request.end(body);
  });
}
