/**
 * The API benchmark's server process (started by bench/api.ts, so that the load generator does not
 * share its event loop): the product app on one port (its configured cache: Redis when REDIS_URL is
 * set, else in-process), the same app without a cache on a second port (uncached
 * numbers), and bare Express routes returning a fixed body, small or as large as a given answer (the
 * ceiling of this Express on this machine), and the cached app with usage metering off (its cost).
 * Loopback only. Prints `{"cached":port,"uncached":port,"cachedUnmetered":port}` once listening.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import { createApp } from '../server/app.js';
import { createWebServices } from '../server/services.js';
import { loadConfig, webEnvSchema } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { createLogger } from '../shared/log.js';

export const BARE_BODY = JSON.stringify({ status: 'ok', service: 'opscan', version: 'v0' });

const config = loadConfig(webEnvSchema, { ...process.env, LOG_LEVEL: 'silent', NETWORKS: 'devnet' });
const log = createLogger({ level: 'silent', name: 'bench-api' });
const db = await createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, statementTimeoutMs: 5000, max: 16 });

const cached = createWebServices({ db, config, log });
await cached.ready();
// The same cached app with USAGE_METERING=off: what metering costs a cached answer (api.ts meteringCost).
const unmetered = createWebServices({ db, config: { ...config, USAGE_METERING: 'off' }, log });
await unmetered.ready();
const uncached = createWebServices({ db, config: { ...config, REDIS_URL: undefined }, log });
// No store and no single flight: every request computes its answer.
uncached.cache = {
  kind: 'memory',
  stats: { hits: 0, misses: 0, stale: 0, errors: 0 },
  lookup: () => Promise.resolve(null),
  async fill(_key, _epoch, compute) {
    return { value: (await compute()).value, maxAgeSeconds: 0, cache: 'miss' };
  },
};

// The bare routes sit in the product app itself, just before its /v0 router: they pass the same
// middleware (CORS, body parser) and nothing else, so the comparison measures the API's own work.
const bare = express.Router();
bare.get('/bare', (_req, res) => {
  res.type('application/json').send(BARE_BODY);
});
// The same ceiling for a body as large as an API answer: /bare/<bytes> answers a fixed JSON body of that size.
const sizedBodies = new Map<number, string>();
bare.get('/bare/:bytes', (req, res) => {
  const bytes = Math.min(Math.max(Number(req.params.bytes) || 0, 12), 10_000_000);
  let body = sizedBodies.get(bytes);
  if (!body) sizedBodies.set(bytes, (body = JSON.stringify({ pad: 'x'.repeat(bytes - 10) })));
  res.type('application/json').send(body);
});
const app = createApp({ db, config, log, services: cached });
type Stack = { stack: Array<{ name: string }> };
const stack = (app as unknown as { router: Stack }).router.stack;
stack.splice(
  stack.findIndex((layer) => layer.name === 'router'),
  0,
  ...(bare as unknown as Stack).stack,
);

const listen = (app: express.Express) =>
  new Promise<number>((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
const ports = {
  cached: await listen(app),
  uncached: await listen(createApp({ db, config, log, services: uncached })),
  cachedUnmetered: await listen(createApp({ db, config, log, services: unmetered })),
};
process.stdout.write(`${JSON.stringify(ports)}\n`);
process.on('SIGTERM', () => process.exit(0));
