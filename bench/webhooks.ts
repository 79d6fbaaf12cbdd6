/**
 * Webhook benchmark: devnet traffic → indexer → outbox → dispatcher → a receiver on 127.0.0.1, all
 * in this process (anvil aside), on PGlite or on PostgreSQL (BENCH_DATABASE_URL / DATABASE_URL: a
 * scratch database is created there and dropped afterwards).
 *   - drain: the outbox already holds every event (indexed with the dispatcher stopped); the
 *     dispatcher then matches, signs and sends them all: deliveries per second.
 *   - live: traffic keeps coming while the indexer follows the head; delay from an op being indexed
 *     (the indexer's commit, seen as its NOTIFY) to its delivery being received: p50 / p99.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { generate, startContinuous, startDevnet } from '../devnet/index.js';
import { startIndexer } from '../indexer/index.js';
import { generateApiKey } from '../shared/apiKeys.js';
import { allInOneEnvSchema, loadConfig } from '../shared/config.js';
import { createDb, type Db } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import * as webhooks from '../shared/db/tables/webhooks.js';
import { createLogger } from '../shared/log.js';
import { newWebhookId } from '../shared/webhookIds.js';
import { keyringFor } from '../shared/webhookKeyring.js';
import { encryptSecret, generateSigningSecret } from '../shared/webhookSecrets.js';
import { startDispatcher } from '../webhooks/startDispatcher.js';
import { quantile } from './apiLoad.js';

export type WebhookBenchOptions = {
  /** Ops generated before the drain phase. */
  ops: number;
  /** Webhooks subscribed to each bundler and each paymaster (each op fans out to several). */
  webhooksPerActor: number;
  liveSeconds: number;
  liveOpsPerBlock: number;
  liveBlockIntervalMs: number;
  databaseUrl?: string;
};

export type WebhookBenchResult = {
  store: string;
  drain: { deliveries: number; seconds: number; perSecond: number; avgBodyBytes: number };
  live: { deliveries: number; perSecond: number; p50Ms: number; p99Ms: number; maxMs: number };
};

export const DEFAULT_WEBHOOK_BENCH: WebhookBenchOptions = {
  ops: 600,
  webhooksPerActor: 5,
  liveSeconds: 20,
  liveOpsPerBlock: 8,
  liveBlockIntervalMs: 250,
};

/**
 * The customer endpoint: answers 200 at once and notes when each key first arrived: its webhook-id,
 * or what `keyOf` reads from the body (null = not noted; only then is the body kept and read).
 */
export async function startSink(
  keyOf?: (body: string) => string | null,
): Promise<{ url: string; firstSeen: Map<string, number>; server: Server }> {
  const firstSeen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    if (keyOf) req.on('data', (chunk: Buffer) => chunks.push(chunk));
    else req.resume();
    req.on('end', () => {
      const at = Date.now();
      const key = keyOf ? keyOf(Buffer.concat(chunks).toString('utf8')) : String(req.headers['webhook-id']);
      if (key !== null && !firstSeen.has(key)) firstSeen.set(key, at);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, firstSeen, server };
}

async function scratchDatabase(url: string | undefined): Promise<{ db: Db; store: string; drop(): Promise<void> }> {
  if (!url) {
    const db = await createDb({});
    return { db, store: 'PGlite (in memory)', drop: () => db.close() };
  }
  const name = `opscan_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  const db = await createDb({ databaseUrl: scratch.toString(), max: 20 });
  return {
    db,
    store: 'PostgreSQL',
    async drop() {
      await db.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const countDeliveries = async (db: Db) =>
  Number((await db.query<{ n: string }>(`select count(*) as n from webhook_deliveries`)).rows[0]!.n);

export async function runWebhookBench(options: Partial<WebhookBenchOptions> = {}): Promise<WebhookBenchResult> {
  const o = { ...DEFAULT_WEBHOOK_BENCH, ...options };
  const log = createLogger({ level: 'error', name: 'bench' });
  const devnet = await startDevnet();
  const scratch = await scratchDatabase(o.databaseUrl);
  const sink = await startSink();
  const { db } = scratch;
  try {
    await migrate(db);
    const truth = await generate(devnet, { ops: o.ops, days: 1, seed: 3 });

    // Webhooks on every bundler and paymaster of the traffic, several each.
    const key = generateApiKey();
    const owner = await apiKeys.insert(db, { prefix: key.prefix, hash: key.hash, name: 'bench' });
    const keyring = await keyringFor(db, undefined);
    const bundlers = new Set([...devnet.bundlers.map((b) => b.address.toLowerCase()), ...truth.userOps.map((op) => op.bundler)]);
    const paymasters = new Set(truth.userOps.flatMap((op) => (op.paymaster ? [op.paymaster] : [])));
    for (const [filter, addresses] of [
      ['BUNDLER', bundlers],
      ['PAYMASTER', paymasters],
    ] as const) {
      for (const address of addresses) {
        for (let i = 0; i < o.webhooksPerActor; i++) {
          const id = newWebhookId();
          await webhooks.insert(db, {
            id,
            apiKeyId: owner.id,
            apiName: `bench ${i}`,
            url: `${sink.url}/${i}`,
            filter,
            identifier: address,
            address,
            chainId: devnet.chainId,
            secretCiphertext: encryptSecret(keyring, id, generateSigningSecret()),
          });
        }
      }
    }

    const env = {
      NETWORKS: 'devnet',
      RPC_URL_DEVNET: devnet.rpcUrl,
      START_BLOCK_DEVNET: '0',
      INDEXER_POLL_INTERVAL_MS: '1000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    };
    const config = loadConfig(allInOneEnvSchema, env);
    const indexer = startIndexer({ db, config, log });

    // Drain: index everything first, then let the dispatcher loose on the full outbox.
    await indexer.syncNow();
    const expected =
      truth.userOps.filter((op) => bundlers.has(op.bundler)).length * o.webhooksPerActor +
      truth.userOps.filter((op) => op.paymaster && paymasters.has(op.paymaster)).length * o.webhooksPerActor;
    const drainStart = Date.now();
    const dispatcher = await startDispatcher({ db, config, log });
    await waitUntil(() => sink.firstSeen.size >= expected, 300_000, `${expected} drain deliveries`);
    const drainSeconds = (Date.now() - drainStart) / 1000;
    // Bodies carry the op in the API's UserOp shape, whose `input` is the whole bundle transaction's.
    const avgBodyBytes = Math.round(
      Number((await db.query<{ b: string }>(`select avg(octet_length(body)) as b from webhook_deliveries`)).rows[0]!.b),
    );

    // Live: commit time of each outbox event (its NOTIFY), then traffic for liveSeconds.
    const committedAt = new Map<number, number>();
    let lastStamped = Number((await db.query<{ m: string | null }>(`select max(id) as m from outbox_events`)).rows[0]!.m ?? 0);
    let stamping = Promise.resolve();
    const unlisten = await db.listen('opscan_outbox', () => {
      const at = Date.now();
      stamping = stamping.then(async () => {
        const { rows } = await db.query<{ id: string }>(`select id from outbox_events where id > $1 order by id`, [lastStamped]);
        for (const r of rows) committedAt.set(Number(r.id), at);
        if (rows.length) lastStamped = Number(rows[rows.length - 1]!.id);
      });
    });
    const before = sink.firstSeen.size;
    const liveStart = Date.now();
    const traffic = startContinuous(devnet, { intervalMs: o.liveBlockIntervalMs, opsPerTick: o.liveOpsPerBlock, onError: () => {} });
    await new Promise((r) => setTimeout(r, o.liveSeconds * 1000));
    await traffic.stop();
    await indexer.syncNow();
    await waitUntil(async () => sink.firstSeen.size >= (await countDeliveries(db)), 60_000, 'live deliveries');
    const liveSeconds = (Date.now() - liveStart) / 1000;
    await unlisten();
    await stamping;

    const { rows } = await db.query<{ id: string; outbox_id: string }>(
      `select id, substr(event_key, 8) as outbox_id from webhook_deliveries where event_key like 'outbox:%'`,
    );
    const delays = rows
      .map((r) => ({ at: sink.firstSeen.get(r.id), committed: committedAt.get(Number(r.outbox_id)) }))
      .filter((x): x is { at: number; committed: number } => x.at !== undefined && x.committed !== undefined)
      .map((x) => x.at - x.committed)
      .sort((a, b) => a - b);

    await dispatcher.stop();
    await indexer.stop();
    return {
      store: scratch.store,
      drain: { deliveries: expected, seconds: drainSeconds, perSecond: Math.round(expected / drainSeconds), avgBodyBytes },
      live: {
        deliveries: sink.firstSeen.size - before,
        perSecond: Math.round((sink.firstSeen.size - before) / liveSeconds),
        p50Ms: quantile(delays, 0.5),
        p99Ms: quantile(delays, 0.99),
        maxMs: delays[delays.length - 1] ?? NaN,
      },
    };
  } finally {
    sink.server.closeAllConnections();
    sink.server.close();
    await scratch.drop();
    await devnet.stop();
  }
}
