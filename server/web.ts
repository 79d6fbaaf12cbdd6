import type { Server } from 'node:http';
import { createApp } from './app.js';
import type { Deps } from './context.js';

/** Starts the web process on `port`; resolves once it listens. */
export async function startWeb(deps: Deps, port: number): Promise<Server> {
  const app = createApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, () => resolve(s));
    s.once('error', reject);
  });
  // Keep-alive longer than a proxy's idle timeout, so it never reuses a socket we just closed.
  server.keepAliveTimeout = 95_000;
  server.headersTimeout = 96_000;
  server.requestTimeout = 30_000;
  const address = server.address();
  deps.log.info({ port: typeof address === 'object' && address ? address.port : port }, 'web listening');
  return server;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
