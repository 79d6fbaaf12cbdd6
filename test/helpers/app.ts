import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateApiKey } from '../../shared/apiKeys.js';
import { loadConfig, webEnvSchema, type WebConfig } from '../../shared/config.js';
import type { Db } from '../../shared/db/client.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import { createLogger } from '../../shared/log.js';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { createWebServices } from '../../server/services.js';

export function testConfig(env: Record<string, string> = {}): WebConfig {
  return loadConfig(webEnvSchema, { LOG_LEVEL: 'silent', NETWORKS: 'devnet', ...env });
}

/**
 * Deps of a test app. With REDIS_URL in `env` the services hold a Redis connection: call
 * `deps.services.close()` when done (useTestApp does).
 */
export function testDeps(db: Db, env: Record<string, string> = {}): Deps {
  const config = testConfig(env);
  const log = createLogger({ level: config.LOG_LEVEL, name: 'test' });
  return { db, config, log, services: createWebServices({ db, config, log }) };
}

export function createTestApp(db: Db, env: Record<string, string> = {}) {
  return createApp(testDeps(db, env));
}

/** Inserts a fresh API key and returns its plain value. */
export async function createTestKey(db: Db, name = 'test', rateLimitPerSecond: number | null = null): Promise<string> {
  const { key, prefix, hash } = generateApiKey();
  await apiKeys.insert(db, { prefix, hash, name, rateLimitPerSecond });
  return key;
}

/**
 * The app of `deps()` listening on a loopback port for the enclosing suite (mocha before/after
 * hooks), for clients that need a real URL (tRPC, fetch). `origin` is known once the suite started.
 */
export function useListeningApp(deps: () => Deps): { readonly origin: string } {
  let server: Server | undefined;
  let origin = '';
  before(async () => {
    const listening = createApp(deps()).listen(0, '127.0.0.1');
    server = listening;
    await new Promise((resolve) => listening.once('listening', resolve));
    origin = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
  return {
    get origin() {
      return origin;
    },
  };
}
