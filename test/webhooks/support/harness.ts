import request from 'supertest';
import type { Db } from '../../../shared/db/client.js';
import { createLogger } from '../../../shared/log.js';
import { startDispatcher, type Dispatcher, type DispatcherOptions } from '../../../webhooks/startDispatcher.js';
import { createTestApp, createTestKey, testConfig } from '../../helpers/app.js';
import { useTestDb } from '../../helpers/db.js';

/** Fast retries for tests: the production schedule's shape in milliseconds. */
export const FAST_SCHEDULE = [0, 20, 40, 60, 80, 100, 120, 140, 160, 180];

/** Kept between tests: the API key, the applied migrations, the generated secret-encryption key. */
// api_plans stays with api_keys, which reference it (PostgreSQL refuses to truncate a referenced table alone).
const KEPT_TABLES = ['api_keys', 'api_plans', 'schema_migrations', 'webhook_generated_keys'];

/**
 * A test file's database, API key, webhook creation through the real endpoint, and dispatchers
 * that are stopped after each test. Tables are emptied before each test.
 */
export function useWebhookHarness(env: Record<string, string> = {}) {
  const t = useTestDb();
  const running: Dispatcher[] = [];
  const fullEnv = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env };
  const state = { key: '' };

  before(async () => {
    state.key = await createTestKey(t.db, 'webhooks');
  });
  beforeEach(async () => {
    const { rows } = await t.db.query<{ tablename: string }>(
      `select tablename from pg_tables where schemaname = current_schema() and not (tablename = any($1::text[]))`,
      [KEPT_TABLES],
    );
    await t.db.query(`truncate ${rows.map((r) => r.tablename).join(', ')}`);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.stop()));
  });

  return {
    get db(): Db {
      return t.db;
    },
    get url() {
      return t.url;
    },
    get key() {
      return state.key;
    },
    app: () => request(createTestApp(t.db, fullEnv)),
    config: (extra: Record<string, string> = {}) => testConfig({ ...fullEnv, ...extra }),
    async createWebhook(webhookUrl: string, filter: string, identifier: string, key = state.key): Promise<{ id: string; secret: string }> {
      const res = await request(createTestApp(t.db, fullEnv))
        .post('/v0/createWebhook')
        .set('x-api-key', key)
        .send({ webhookUrl, filter, identifier, chainId: 31337, apiName: `${filter} test` });
      if (res.status !== 200) throw new Error(`createWebhook: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.webhook.id, secret: res.body.webhook.secret };
    },
    /** Waits until `count` deliveries have `status` (the receiver sees a request before its outcome is recorded). */
    async waitForDeliveries(status: string, count: number, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { rows } = await t.db.query<{ n: string }>(`select count(*) as n from webhook_deliveries where status = $1`, [status]);
        if (Number(rows[0]!.n) >= count) return;
        if (Date.now() > deadline) throw new Error(`fewer than ${count} deliveries ${status} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async startDispatcher(options: DispatcherOptions = {}, extraEnv: Record<string, string> = {}): Promise<Dispatcher> {
      const dispatcher = await startDispatcher({
        db: t.db,
        config: testConfig({ ...fullEnv, ...extraEnv }),
        log: createLogger({ level: 'silent', name: 'test' }),
        options: { pollIntervalMs: 50, retrySchedule: FAST_SCHEDULE, timeoutMs: 2000, ...options },
      });
      running.push(dispatcher);
      return dispatcher;
    },
  };
}
