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
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;
const CREATE_TIME_LOOKUP_TIMEOUT_MS = 2000;

export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveWithDns: ResolveHost = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Host names that only ever mean "this machine" or "this private network". */
const PRIVATE_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)\.?$/i;

/**
 * True when connecting to `ip` is allowed: a public unicast address. An IPv6 address that embeds an
 * IPv4 address (see `embeddedIPv4`) is judged by that IPv4, because a translator, relay or
 * dual-stack host may deliver it there: `[::127.0.0.1]` must not reach loopback. An address with a
 * zone id (`fe80::1%eth0`) is refused: zones only scope link-local and multicast addresses.
 */
export function isAllowedAddress(ip: string, allowPrivate: boolean): boolean {
  if (allowPrivate) return true;
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return false;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.every((v4) => v4.range() === 'unicast');
  return v6.range() === 'unicast';
}

/** 16-bit groups `from`..`from + 1` of an IPv6 address as an IPv4 address, optionally inverted. */
function ipv4At(parts: number[], from: number, invert = false): ipaddr.IPv4 {
  const bits = invert ? 0xffff : 0;
  const [high, low] = [parts[from]! ^ bits, parts[from + 1]! ^ bits];
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 address spread over bytes `bytes` of the 16 (RFC 6052 skips byte 8, bits 64–71). */
function ipv4AtBytes(address: ipaddr.IPv6, bytes: number[]): ipaddr.IPv4 {
  const all = address.toByteArray();
  return new ipaddr.IPv4(bytes.map((b) => all[b]!));
}

const RFC6052_LOCAL_PREFIX = ipaddr.parseCIDR('64:ff9b:1::/48') as [ipaddr.IPv6, number];

/**
 * The IPv4 addresses an IPv6 address carries, or null when it is no such form:
 *   ::a.b.c.d (::/96, IPv4-compatible, deprecated), ::ffff:a.b.c.d (IPv4-mapped) and
 *   ::ffff:0:a.b.c.d (IPv4-translated, RFC 6145): the last 32 bits;
 *   64:ff9b::/96 (NAT64, RFC 6052): the last 32 bits;
 *   64:ff9b:1::/48 (local-use NAT64, RFC 8215): the operator picks the prefix length, which moves
 *     the IPv4 — every RFC 6052 position that fits inside the /48 (/48, /56, /64, /96) is returned;
 *   2002::/16 (6to4, RFC 3056): bits 16–48;
 *   2001::/32 (Teredo, RFC 4380): the server at bits 32–64 and the client, inverted, in the last 32.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (p[5] === 0 || p[5] === 0xffff)) return [ipv4At(p, 6)];
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return [ipv4At(p, 6)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [ipv4At(p, 6)];
  if (address.match(RFC6052_LOCAL_PREFIX)) {
    return [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ].map((bytes) => ipv4AtBytes(address, bytes));
  }
  if (p[0] === 0x2002) return [ipv4At(p, 1)];
  if (p[0] === 0x2001 && p[1] === 0) return [ipv4At(p, 2), ipv4At(p, 6, true)];
  return null;
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

/** Said with each refusal that the development setting would lift, so a developer with a local receiver knows what to set. */
const FOR_DEVELOPMENT = 'WEBHOOK_ALLOW_PRIVATE_URLS=true allows it for development';

/**
 * Checks a webhook URL at creation. Names that do not resolve right now are accepted (DNS may not be
 * published yet); the connect-time check still guards every delivery.
 */
export async function checkWebhookUrl(raw: string, options: { allowPrivate: boolean; resolve?: ResolveHost }): Promise<UrlVerdict> {
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
    const lifted = isLoopbackHost(host) ? ` (http:// to a loopback receiver: ${FOR_DEVELOPMENT})` : '';
    return { ok: false, reason: `must be an https:// URL${lifted}` };
  }
  if (options.allowPrivate) return { ok: true, url };
  const literal = ipLiteralOf(host);
  if (literal) {
    return isAllowedAddress(literal, false)
      ? { ok: true, url }
      : { ok: false, reason: `must not point to a private, loopback or link-local address (${literal}; ${FOR_DEVELOPMENT})` };
  }
  if (PRIVATE_NAME.test(host) || !host.replace(/\.$/, '').includes('.')) {
    return { ok: false, reason: `must not point to a private or local host name (${host}; ${FOR_DEVELOPMENT})` };
  }
  const addresses = await resolveQuietly(options.resolve ?? resolveWithDns, host);
  const bad = addresses.find((a) => !isAllowedAddress(a, false));
  return bad
    ? { ok: false, reason: `host ${host} resolves to a private, loopback or link-local address (${bad}; ${FOR_DEVELOPMENT})` }
    : { ok: true, url };
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
