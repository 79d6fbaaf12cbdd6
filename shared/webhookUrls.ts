import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may point. A webhook URL is chosen by a customer and fetched by our servers, the
 * textbook SSRF vector (OWASP API7:2023), so:
 *   - at creation the URL must be https, carry no credentials, and its host must not be, or resolve
 *     to, anything but a public unicast address;
 *   - at every connection the dispatcher checks the address it actually connects to
 *     (`isAllowedAddress`), which defeats DNS rebinding and names added after creation.
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS, development and tests) lifts the address rules and
 * allows plain http, but only to loopback.
 * @see research/delivery-and-api.md §5
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;
const CREATE_TIME_LOOKUP_TIMEOUT_MS = 2000;

export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveWithDns: ResolveHost = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Host names that only ever mean "this machine" or "this private network". */
const PRIVATE_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)\.?$/i;

/** True when connecting to `ip` is allowed. Anything but a public unicast address is refused. */
export function isAllowedAddress(ip: string, allowPrivate: boolean): boolean {
  if (allowPrivate) return true;
  if (!ipaddr.isValid(ip)) return false;
  // process() unwraps IPv4-mapped IPv6 (::ffff:127.0.0.1 is loopback, not unicast).
  return ipaddr.process(ip).range() === 'unicast';
}

/** The IP a URL host denotes literally (brackets stripped), or null for a name. */
export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (ipaddr.IPv4.isValidFourPartDecimal(bare) || bare.includes(':')) ? bare : null;
}

function isLoopbackHost(hostname: string): boolean {
  const ip = ipLiteralOf(hostname);
  if (ip) return ipaddr.process(ip).range() === 'loopback';
  return /(^|\.)localhost\.?$/i.test(hostname);
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Checks a webhook URL at creation. Names that do not resolve right now are accepted (DNS may not be
 * published yet); the connect-time check still guards every delivery.
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve?: ResolveHost },
): Promise<UrlVerdict> {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'must be an https:// URL' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  // WHATWG parsing already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1.
  const host = url.hostname;
  if (url.protocol === 'http:' && !(options.allowPrivate && isLoopbackHost(host))) {
    return { ok: false, reason: 'must be an https:// URL' };
  }
  if (options.allowPrivate) return { ok: true, url };
  const literal = ipLiteralOf(host);
  if (literal) {
    return isAllowedAddress(literal, false)
      ? { ok: true, url }
      : { ok: false, reason: `must not point to a private, loopback or link-local address (${literal})` };
  }
  if (PRIVATE_NAME.test(host) || !host.replace(/\.$/, '').includes('.')) {
    return { ok: false, reason: `must not point to a private or local host name (${host})` };
  }
  const addresses = await resolveQuietly(options.resolve ?? resolveWithDns, host);
  const bad = addresses.find((a) => !isAllowedAddress(a, false));
  return bad ? { ok: false, reason: `host ${host} resolves to a private, loopback or link-local address (${bad})` } : { ok: true, url };
}

async function resolveQuietly(resolve: ResolveHost, host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((done) => {
    timer = setTimeout(() => done([]), CREATE_TIME_LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolve(host).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
