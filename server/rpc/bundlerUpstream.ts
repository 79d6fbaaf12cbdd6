import { AppError } from '../../shared/errors.js';

/**
 * The bundler a network's RPC forwards to (BUNDLER_URL_<NETWORK>). Its URL usually carries the
 * operator's provider key, so nothing it answers or fails with reaches the caller with the URL in
 * it: a failure is reported by kind only, and the URL is cut out of any answer that echoes it.
 */

/** How long a forwarded call may take: eth_sendUserOperation simulates the op first. */
const UPSTREAM_TIMEOUT_MS = 30_000;

/** A JSON-RPC answer's outcome, as the bundler gave it: a result or an error object. */
export type UpstreamOutcome = { result: unknown } | { error: unknown };

/** The URL and the parts of it that could identify the operator's account, longest first. */
function secretsOf(url: string): string[] {
  const parsed = new URL(url);
  const parts = [url, `${parsed.origin}${parsed.pathname}`, parsed.host];
  if (parsed.pathname.length > 1) parts.push(parsed.pathname);
  if (parsed.search.length > 1) parts.push(parsed.search.slice(1));
  return parts;
}

/** `text` with every part of the bundler's URL replaced. */
function redacted(text: string, url: string): string {
  return secretsOf(url).reduce((acc, secret) => acc.split(secret).join('<bundler>'), text);
}

/**
 * Sends one JSON-RPC call to the bundler and returns its outcome. An unreachable bundler, one that
 * answers with an HTTP error, or an answer that is not JSON-RPC is a BAD_GATEWAY naming no URL.
 */
export async function callBundler(url: string, method: string, params: unknown): Promise<UpstreamOutcome> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }),
      signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = (error as { name?: unknown } | null)?.name === 'TimeoutError';
    throw new AppError(
      'BAD_GATEWAY',
      timedOut ? `The bundler did not answer within ${UPSTREAM_TIMEOUT_MS / 1000} s` : 'The bundler could not be reached',
    );
  }
  const text = redacted(await response.text().catch(() => ''), url);
  if (!response.ok) throw new AppError('BAD_GATEWAY', `The bundler answered HTTP ${response.status}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('BAD_GATEWAY', 'The bundler answered something other than JSON');
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    if ('error' in body) return { error: body.error };
    if ('result' in body) return { result: body.result };
  }
  throw new AppError('BAD_GATEWAY', 'The bundler answered something other than a JSON-RPC response');
}
