/**
 * Records test/migration/previousRelease.json.br: run on the code of the release the fixture stands
 * for (`npx tsx test/migration/recordPreviousRelease.ts`). It generates a deterministic devnet (fixed
 * seed; every op shape the generator makes), indexes it into a fresh embedded database, keeps the
 * tables' rows, and asks the API a fixed list of questions over them (/v0, /jiffyscan/v0, GraphQL).
 * The devnet's block times follow the wall clock, so a new recording has other values: record only
 * when the release the fixture stands for changes.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import type request from 'supertest';
import { generate, startDevnet, type GroundTruth } from '../../devnet/index.js';
import { startIndexer } from '../../indexer/index.js';
import { createApp } from '../../server/app.js';
import { indexerEnvSchema, loadConfig } from '../../shared/config.js';
import { createDb } from '../../shared/db/client.js';
import { listMigrations, migrate } from '../../shared/db/migrate.js';
import { createLogger } from '../../shared/log.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { sampleInputs } from '../server/support/sampleInputs.js';
import { ask, dumpTables, FIXTURE, type PreviousRelease, type Recorded, type Request } from './previousRelease.js';

const OPS = Number(process.env.PREVIOUS_RELEASE_OPS ?? 240);
const network = 'devnet';

/** Every n-th item of a list (the first included). */
const everyNth = <T>(items: readonly T[], n: number): T[] => items.filter((_, i) => i % n === 0);
const distinct = (values: Array<string | null | undefined>): string[] => [...new Set(values.filter((v): v is string => !!v))];

/** The REST questions: every endpoint's sample, then the entities the truth names, in pages. */
function restRequests(truth: GroundTruth): Request[] {
  const get = (base: string, name: string, query: Record<string, string>): Request => ({ method: 'GET', path: `${base}/${name}`, query });
  const page = { network, first: '10', skip: '0' };
  const requests: Request[] = [];
  for (const base of ['/v0', '/jiffyscan/v0']) {
    for (const [name, query] of Object.entries(sampleInputs(truth))) requests.push(get(base, name, query));
  }
  for (const op of truth.userOps) requests.push(get('/v0', 'getUserOp', { hash: op.userOpHash }));
  for (const op of everyNth(truth.userOps, 4)) {
    const opQuery = { userOpHash: op.userOpHash, network };
    requests.push(
      get('/jiffyscan/v0', 'getUserOp', { hash: op.userOpHash }),
      get('/v0', 'getUserOpLogs', opQuery),
      get('/v0', 'getUserOpMetadata', opQuery),
      get('/v0', 'getUserOpTraces', opQuery),
      get('/v0', 'getTrxTraces', { network, trxHash: op.transactionHash }),
      get('/v0', 'getBundleActivity', { ...page, bundle: op.transactionHash }),
      get('/v0', 'getBlockActivity', { ...page, blockNumber: String(op.blockNumber) }),
      get('/v0', 'searchEntry', { entry: op.transactionHash }),
      get('/v0', 'searchEntry', { entry: op.userOpHash }),
    );
  }
  for (const first of ['100']) {
    for (const skip of ['0', '100', '200']) {
      requests.push(get('/v0', 'getLatestUserOps', { network, first, skip }), get('/v0', 'getLatestBundles', { network, first, skip }));
    }
  }
  for (const sender of distinct(truth.userOps.map((o) => o.sender))) {
    requests.push(
      get('/v0', 'getAddressActivity', { ...page, address: sender }),
      get('/v0', 'getAddressTransactions', { ...page, address: sender }),
    );
  }
  for (const paymaster of distinct(truth.userOps.map((o) => o.paymaster))) {
    requests.push(get('/v0', 'getPaymasterActivity', { ...page, address: paymaster }));
  }
  for (const bundler of distinct(truth.userOps.map((o) => o.bundler))) {
    requests.push(get('/v0', 'getBundlerActivity', { ...page, address: bundler }), get('/v0', 'searchEntry', { entry: bundler }));
  }
  for (const factory of distinct(truth.accounts.map((a) => a.factory))) {
    requests.push(get('/v0', 'getFactoryDetails', { ...page, factory }));
  }
  const parties = distinct(truth.transfers.flatMap((t) => [t.from, t.to])).slice(0, 24);
  for (const address of parties) {
    requests.push(
      get('/v0', 'getAddressERC20Transfers', { ...page, address }),
      get('/v0', 'getAddressNFTTransfers', { ...page, address }),
      get('/v0', 'getAddressBalances', { ...page, address }),
      get('/v0', 'getAddressAggregateData', { address, filter: 'userOps,erc20Transfers,erc721Transfers', first: '10', skip: '0' }),
    );
  }
  for (const transfer of everyNth(truth.transfers, 6)) {
    if (transfer.logIndex === null || transfer.logIndex === undefined) continue;
    requests.push(
      get('/v0', 'getLogFromIndex', { network, transactionHash: transfer.transactionHash, logIndex: String(transfer.logIndex) }),
    );
  }
  requests.push(
    get('/v0', 'getDailyMetrics', { network, noOfDays: '7' }),
    get('/v0', 'getTopPaymasters', { network, first: '20', skip: '0' }),
    get('/v0', 'getTopBundlers', { network, first: '20', skip: '0' }),
    get('/v0', 'getTopFactories', { first: '20', skip: '0' }),
  );
  return requests;
}

/**
 * GraphQL questions made from the schema itself: each root list field with every scalar field of
 * its entity, in two pages, and the single-entity field of each list's first answer.
 */
async function graphqlRequests(app: Parameters<typeof request>[0], key: string): Promise<Request[]> {
  const path = `/subgraphs/name/${network}`;
  const introspection = await ask(app, key, {
    method: 'POST',
    path,
    body: {
      query:
        '{ __schema { queryType { fields { name args { name } type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } types { name kind fields { name args { name type { kind } } type { kind ofType { kind ofType { kind } } } } } } }',
    },
  });
  type TypeRef = { kind: string; name: string | null; ofType: TypeRef | null };
  type Field = { name: string; args: Array<{ name: string; type?: { kind: string } }>; type: TypeRef };
  const schema = (
    introspection.answer as {
      data: { __schema: { queryType: { fields: Field[] }; types: Array<{ name: string; kind: string; fields: Field[] | null }> } };
    }
  ).data.__schema;
  const named = (t: TypeRef): TypeRef => (t.ofType ? named(t.ofType) : t);
  const isList = (t: TypeRef): boolean => t.kind === 'LIST' || (!!t.ofType && isList(t.ofType));
  const scalarsOf = (typeName: string): string[] =>
    (schema.types.find((t) => t.name === typeName)?.fields ?? [])
      .filter((f) => f.args.every((a) => a.type?.kind !== 'NON_NULL') && ['SCALAR', 'ENUM'].includes(named(f.type).kind ?? ''))
      .map((f) => f.name);
  const requests: Request[] = [];
  for (const field of schema.queryType.fields) {
    if (field.name.startsWith('_') || !isList(field.type)) continue;
    const selection = scalarsOf(named(field.type).name!).join(' ');
    if (!selection) continue;
    for (const skip of [0, 100]) {
      requests.push({ method: 'POST', path, body: { query: `{ ${field.name}(first: 100, skip: ${skip}) { ${selection} } }` } });
    }
  }
  requests.push({ method: 'POST', path, body: { query: '{ _meta { block { number hash timestamp } deployment hasIndexingErrors } }' } });
  return requests;
}

async function main(): Promise<void> {
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const devnet = await startDevnet();
  try {
    const truth = await generate(devnet, { ops: OPS, days: 3, seed: 34 });
    const db = await createDb({});
    await migrate(db);
    const log = createLogger({ level: 'silent', name: 'record' });
    const indexer = startIndexer({
      db,
      log,
      config: loadConfig(indexerEnvSchema, { NETWORKS: network, RPC_URL_DEVNET: devnet.rpcUrl, START_BLOCK_DEVNET: '0' }),
    });
    try {
      await indexer.syncNow();
    } finally {
      await indexer.stop();
    }
    const tables = await dumpTables(db);
    const key = await createTestKey(db, 'record', 1_000_000);
    const deps = testDeps(db, { RATE_LIMIT_PER_SECOND: '1000000' });
    const app = createApp(deps);
    const requests = [...restRequests(truth), ...(await graphqlRequests(app, key))];
    const answers: Recorded[] = [];
    for (const r of requests) answers.push({ ...r, ...(await ask(app, key, r)) });
    await deps.services.close();
    await db.close();
    const fixture: PreviousRelease = { commit, lastMigration: listMigrations().at(-1)!.name, tables, answers };
    // Brotli with a 16 MB window: the answers repeat the same ops many times over (70 MB of JSON),
    // which gzip's 32 KB window cannot see (4 MB) and brotli can (0.25 MB).
    const json = Buffer.from(JSON.stringify(fixture));
    const packed = brotliCompressSync(json, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: json.length },
    });
    writeFileSync(FIXTURE, packed);
    console.log(`${truth.userOps.length} ops, ${answers.length} answers, ${Object.keys(tables).length} tables: ${packed.length} bytes`);
  } finally {
    await devnet.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
