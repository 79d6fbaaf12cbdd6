/**
 * A devnet with generated ERC-4337 traffic, indexed by the real indexer into this test file's
 * database, and an API app over it: what the API tests compare with the generator's ground truth.
 */
import request from 'supertest';
import { generate, startDevnet, type Devnet, type GroundTruth } from '../../../devnet/index.js';
import { indexerEnvSchema, loadConfig } from '../../../shared/config.js';
import type { Db } from '../../../shared/db/client.js';
import * as accounts from '../../../shared/db/tables/accounts.js';
import { createLogger } from '../../../shared/log.js';
import { startIndexer, type Indexer } from '../../../indexer/index.js';
import { createApp } from '../../../server/app.js';
import type { Deps } from '../../../server/context.js';
import { createTestKey, testDeps } from '../../helpers/app.js';
import { useTestDb } from '../../helpers/db.js';

export type IndexedDevnet = {
  readonly db: Db;
  readonly devnet: Devnet;
  readonly truth: GroundTruth;
  /** An API key with a rate limit high enough for any test. */
  readonly key: string;
  /** Deps of the shared app (RPC_URL_DEVNET set, so live balances work). */
  readonly deps: Deps;
  /** supertest on the shared app. */
  api(): request.Agent;
  /** GET /v0/<name> with the key. */
  get(name: string, query?: Record<string, unknown>): Promise<request.Response>;
};

/** A devnet with its traffic made, and how to stop it: what useIndexedDevnet indexes. */
export type Traffic = { devnet: Devnet; truth: GroundTruth; stop(): Promise<void> };

/** The real indexer on the devnet at `rpcUrl`, writing to `db`, quiet (call stop() when done). */
export function startDevnetIndexer(db: Db, rpcUrl: string): Indexer {
  const log = createLogger({ level: 'silent', name: 'test-indexer' });
  const config = loadConfig(indexerEnvSchema, { NETWORKS: 'devnet', RPC_URL_DEVNET: rpcUrl, START_BLOCK_DEVNET: '0' });
  return startIndexer({ db, config, log });
}

/** Generated traffic (`ops` over `days`), or whatever `traffic` makes (the realistic devnet). */
export function useIndexedDevnet(
  options: { ops: number; days?: number; seed?: number } | { traffic: () => Promise<Traffic> },
): IndexedDevnet {
  const t = useTestDb();
  let devnet: Devnet | undefined;
  let truth: GroundTruth | undefined;
  let stop: (() => Promise<void>) | undefined;
  let deps: Deps | undefined;
  let key = '';

  before(async function () {
    this.timeout(600_000);
    if ('traffic' in options) {
      ({ devnet, truth, stop } = await options.traffic());
    } else {
      devnet = await startDevnet();
      stop = () => devnet!.stop();
      truth = await generate(devnet, { ops: options.ops, days: options.days ?? 3, seed: options.seed ?? 7 });
    }
    const indexer = startDevnetIndexer(t.db, devnet.rpcUrl);
    try {
      await indexer.syncNow();
      // The naming pass runs at the head and syncNow() returns once it is complete, unless the node
      // answered nothing (a stalled pass): then pass again, so no account is left unnamed (null).
      for (let pass = 1; (await accounts.listUnnamed(t.db, devnet.chainId, 1)).length > 0; pass++) {
        if (pass === 5) throw new Error('useIndexedDevnet: accounts still unnamed after 5 indexer passes');
        await indexer.syncNow();
      }
    } finally {
      await indexer.stop();
    }
    // Keyless calls (searchEntry) are limited per IP: tests make many from one address.
    deps = testDeps(t.db, { RPC_URL_DEVNET: devnet.rpcUrl, RATE_LIMIT_PER_SECOND: '1000000' });
    key = await createTestKey(t.db, 'api-tests', 1_000_000);
  });

  after(async () => {
    await deps?.services.close();
    await stop?.();
  });

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useIndexedDevnet: ${what} exists only inside tests/hooks`);
    return value;
  };
  let app: ReturnType<typeof createApp> | undefined;
  const api = () => request.agent((app ??= createApp(need(deps, 'the app'))));

  return {
    get db() {
      return t.db;
    },
    get devnet() {
      return need(devnet, 'the devnet');
    },
    get truth() {
      return need(truth, 'the truth');
    },
    get key() {
      return key;
    },
    get deps() {
      return need(deps, 'deps');
    },
    api,
    get(name, query = {}) {
      return api().get(`/v0/${name}`).query(query).set('x-api-key', key);
    },
  };
}
