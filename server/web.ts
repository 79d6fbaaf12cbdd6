import type { Server } from 'node:http';
import type { WebConfig } from '../shared/config.js';
import type { Db } from '../shared/db/client.js';
import type { Logger } from '../shared/log.js';
import { closeServer as closeHttpServer } from '../shared/opsServer.js';
import { createApp } from './app.js';
import type { AccessLogLevel } from './http/accessLog.js';
import { answerClientErrors } from './http/requestGuards.js';
import { createWebServices } from './services.js';

/**
 * Starts the web process on `port`; resolves once it listens. Its services (Redis connection,
 * caches) are created here and released when the server closes.
 */
export async function startWeb(
  base: { db: Db; config: WebConfig; log: Logger; accessLogLevel?: AccessLogLevel },
  port: number,
): Promise<Server> {
  const services = createWebServices(base);
  await services.ready();
  const app = createApp({ ...base, services });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, () => resolve(s));
    s.once('error', reject);
  });
  server.once('close', () => void services.close());
  closingServices.set(server, () => services.close());
  answerClientErrors(server);
  // Keep-alive longer than a proxy's idle timeout, so it never reuses a socket we just closed.
  server.keepAliveTimeout = 95_000;
  server.headersTimeout = 96_000;
  server.requestTimeout = 30_000;
  const address = server.address();
  base.log.info({ port: typeof address === 'object' && address ? address.port : port }, 'web listening');
  return server;
}

/** The web server's services, released after its connections (the usage counted last is written then). */
const closingServices = new WeakMap<Server, () => Promise<void>>();

/** Closes the server, then its services (closeServer of shared/opsServer.ts, plus the usage flush). */
export async function closeServer(server: Server): Promise<void> {
  await closeHttpServer(server);
  await closingServices.get(server)?.();
}
