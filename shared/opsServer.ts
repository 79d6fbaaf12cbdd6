/**
 * What an operator's platform asks every process: `/metrics` (Prometheus text, prom-client's
 * default registry), `/healthz` (the process answers) and `/readyz` (it can do its work: the
 * database answers and its migrations are current). The web process mounts the same handlers on
 * its app; the indexer and the dispatcher serve them on METRICS_PORT with this small server.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { collectDefaultMetrics, register } from 'prom-client';
import type { Queryable } from './db/client.js';
import { assertMigrated } from './db/migrate.js';
import type { Logger } from './log.js';

let defaultsCollected = false;
/** Process metrics (CPU, memory, event-loop lag, GC) beside ours; once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics();
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether an Authorization header carries exactly `Bearer <token>`, compared in constant time (of digests: any length). */
export function bearerMatches(token: string, authorization: string | undefined): boolean {
  return timingSafeEqual(digest(authorization ?? ''), digest(`Bearer ${token}`));
}

/** Whether an Authorization header carries the metrics bearer token; no token: open. */
export function metricsAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  return !token || bearerMatches(token, authorization);
}

/** A probe answers within this, whatever the database does (a connection attempt may hang up to 10 s). */
const READY_TIMEOUT_MS = 3_000;

/** Resolves when the process can do its work; rejects with the reason it cannot. */
export async function checkReady(db: Queryable): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
  });
  try {
    await Promise.race([
      (async () => {
        await db.query('select 1');
        await assertMigrated(db);
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export type Probe = { status: number; contentType: string; body: string };

/** The answer to GET `path`, or null for a path this module does not serve. */
export async function probe(
  path: string,
  options: { db: Queryable; metricsToken?: string; authorization?: string },
): Promise<Probe | null> {
  const json = (status: number, value: unknown): Probe => ({ status, contentType: 'application/json', body: JSON.stringify(value) });
  switch (path) {
    case '/healthz':
      return json(200, { status: 'ok' });
    case '/readyz':
      try {
        await checkReady(options.db);
        return json(200, { status: 'ready' });
      } catch (err) {
        return json(503, { status: 'not ready', reason: (err as Error).message });
      }
    case '/metrics':
      if (!metricsAuthorized(options.metricsToken, options.authorization)) {
        return json(401, { message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', code: 'UNAUTHORIZED' });
      }
      return { status: 200, contentType: register.contentType, body: await register.metrics() };
    default:
      return null;
  }
}

/** Stops taking connections and resolves once those in flight are answered. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** Serves /metrics, /healthz and /readyz on `port` (the indexer and the dispatcher); resolves once listening. */
export async function startOpsServer(options: { port: number; db: Queryable; metricsToken?: string; log: Logger }): Promise<Server> {
  collectProcessMetrics();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const answer =
      req.method === 'GET'
        ? probe(path, { db: options.db, metricsToken: options.metricsToken, authorization: req.headers.authorization })
        : Promise.resolve(null);
    void answer
      .then(
        (a) =>
          a ?? {
            status: 404,
            contentType: 'application/json',
            body: JSON.stringify({ message: `No endpoint ${req.method} ${path}`, code: 'NOT_FOUND' }),
          },
      )
      .catch((err: unknown) => {
        options.log.error({ err }, 'ops endpoint failed');
        return { status: 500, contentType: 'application/json', body: JSON.stringify({ message: 'Internal error', code: 'INTERNAL' }) };
      })
      .then((a) => res.writeHead(a.status, { 'content-type': a.contentType }).end(a.body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, () => resolve());
  });
  const address = server.address();
  options.log.info({ port: typeof address === 'object' && address ? address.port : options.port }, 'serving /metrics, /healthz, /readyz');
  return server;
}
