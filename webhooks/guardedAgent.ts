import { Agent, buildConnector } from 'undici';
import { ipLiteralOf, isAllowedAddress, resolveWithDns, type ResolveHost } from '../shared/webhookUrls.js';

/**
 * The HTTP agent of every webhook request. Its connector checks the address it is about to connect
 * to, at connection time: the host's literal IP, or every address its name resolves to (refused if
 * any is not public unicast), then connects to that checked address itself, so there is no second
 * lookup an attacker's DNS could answer differently (rebinding). TLS still verifies the certificate
 * against the host name. Node's global fetch ignores custom agents, hence undici's own client.
 * The address rules are shared/webhookUrls.ts'.
 */

export class BlockedAddressError extends Error {
  constructor(host: string, address: string) {
    super(`refused to connect to ${host}: ${address} is not a public unicast address`);
    this.name = 'BlockedAddressError';
  }
}

export type GuardedAgentOptions = {
  allowPrivate: boolean;
  /** Injected by tests (no DNS there) to play a name that resolves to loopback. */
  resolve?: ResolveHost;
  connectTimeoutMs?: number;
  /** Time allowed for the response headers and between body chunks. */
  responseTimeoutMs: number;
};

export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const connector = buildConnector({ timeout: options.connectTimeoutMs ?? 5000 });
  const resolve = options.resolve ?? resolveWithDns;
  const connect: buildConnector.connector = (target, callback) => {
    const literal = ipLiteralOf(target.hostname);
    const addresses = literal ? Promise.resolve([literal]) : resolve(target.hostname);
    addresses.then(
      (found) => {
        if (found.length === 0) return callback(new Error(`${target.hostname} resolves to no address`), null);
        const bad = found.find((a) => !isAllowedAddress(a, options.allowPrivate));
        if (bad) return callback(new BlockedAddressError(target.hostname, bad), null);
        const servername = literal ? undefined : target.hostname;
        return connector({ ...target, hostname: found[0]!, servername }, callback);
      },
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({
    connect,
    headersTimeout: options.responseTimeoutMs,
    bodyTimeout: options.responseTimeoutMs,
    keepAliveTimeout: 30_000,
  });
}
