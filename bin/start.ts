import { allInOneEnvSchema, loadConfig } from '../shared/config.js';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import * as indexerState from '../shared/db/tables/indexerState.js';
import { generateApiKey } from '../shared/apiKeys.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import { createShutdown } from '../shared/lifecycle.js';
import { createLogger, isPretty, terminalLiveLines } from '../shared/log.js';
import * as userOps from '../shared/db/tables/userOps.js';
import { closeServer, startWeb } from '../server/web.js';
import { rollbackTo, startIndexer } from '../indexer/index.js';
import { indexerMetrics } from '../indexer/metrics.js';
import { startDispatcher } from '../webhooks/startDispatcher.js';
import { dispatcherMetrics } from '../webhooks/metrics.js';
import { DEVNET_CHAIN_ID, defaultGenesisTimestamp, generate, startContinuous, startDevnet } from '../devnet/index.js';
import { generateRealistic, startRealisticContinuous, startRealisticDevnet } from '../devnet/realistic/index.js';
import { beginStartUp } from '../shared/startUp.js';
import { banner, exampleCommands } from './banner.js';
import { demoChainEnv } from './demoEnv.js';

/**
 * `npm start`: the whole product in one process on the embedded defaults — migrations, the web
 * process, the indexer and the webhook dispatcher (with PGlite only one process may open the
 * store, so the processes of the Procfile share this one). When the `devnet` network is indexed
 * and no RPC_URL_DEVNET is given, it also starts a local chain with the real EntryPoints, generated
 * history and live real-world traffic (two Alto bundlers; Safe, ERC-7579, EIP-7702 and SimpleAccount
 * accounts; see devnet/realistic), so a newcomer sees the whole product work on real shapes.
 */
const DEMO_OPS = 300;
/** Ops sent through the bundlers before the banner (live ones follow every DEMO_TICK_MS). */
const DEMO_REALISTIC_OPS = 24;
const DEMO_TICK_MS = 3000;
/** The banner waits this long at most for a first indexed op (its hash goes in an example). */
const FIRST_OP_WAIT_MS = 90_000;

const startUp = beginStartUp('opscan');
let config = loadConfig(allInOneEnvSchema, process.env);
const log = createLogger({ level: config.LOG_LEVEL, name: 'opscan', format: config.LOG_FORMAT });
startUp.logEnvFile(log);
const shutdown = createShutdown(log);

// With PostgreSQL the pool serves every process: the web's queries, and per indexed network a
// writer-lock session plus two overlapping batch writes (see indexer/main.ts).
const db = await createDb({
  databaseUrl: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  max: 10 + config.networks.length * 4,
  log,
});
shutdown.add('db', () => db.close());
await migrate(db);
log.debug({ ms: Math.round(performance.now()) }, 'store ready');

const devnetNetwork = config.networks.find((n) => n.chainId === DEVNET_CHAIN_ID);
const demoChain = Boolean(devnetNetwork && devnetNetwork.rpcUrls.length === 0);
if (devnetNetwork && demoChain) {
  // Realistic traffic (DEMO_TRAFFIC): the devnet with Alto bundlers and real accounts and
  // paymasters, its genesis three days back so generated history fits before the live ops.
  const started =
    config.DEMO_TRAFFIC === 'realistic'
      ? startRealisticDevnet({
          genesisTimestamp: defaultGenesisTimestamp(3),
          // A demo op re-sent to the other bundler is the demo's own business, not the operator's.
          report: (message) => log.debug({ module: 'devnet' }, message),
        }).then((rd) => ({ devnet: rd.devnet, realistic: rd }))
      : startDevnet().then((devnet) => ({ devnet, realistic: null }));
  // No anvil for this platform, most likely: its message says what to do, on the start-up failure's line.
  const { devnet, realistic } = await started;
  shutdown.add('devnet', () => (realistic ? realistic.stop() : devnet.stop()));
  if (realistic) log.info({ bundlers: realistic.bundlers.map((b) => b.url) }, 'devnet: Alto bundlers running');
  // The demo chain is new on every start: rows indexed from a previous run's chain describe
  // blocks that no longer exist, so they go first (as a reorg down to genesis would).
  if (await indexerState.findCursor(db, DEVNET_CHAIN_ID)) {
    await rollbackTo(db, DEVNET_CHAIN_ID, { number: -1, hash: '0x' });
  }
  log.info({ rpcUrl: devnet.rpcUrl, ops: DEMO_OPS }, 'devnet started; generating demo traffic');
  // Three days of generated history for the daily chart, then live traffic.
  await generate(devnet, { ops: DEMO_OPS, days: 3 });
  if (realistic) {
    await generateRealistic(realistic, { ops: DEMO_REALISTIC_OPS });
    const traffic = startRealisticContinuous(realistic, {
      intervalMs: DEMO_TICK_MS,
      opsPerTick: 3,
      onError: (err) => log.warn({ err }, 'realistic demo traffic: a tick failed'),
    });
    shutdown.add('devnet traffic', () => traffic.stop());
  } else {
    const traffic = startContinuous(devnet, {
      intervalMs: DEMO_TICK_MS,
      opsPerTick: 3,
      onError: (err) => log.warn({ err }, 'demo traffic: a tick failed'),
    });
    shutdown.add('devnet traffic', () => traffic.stop());
  }
  config = loadConfig(allInOneEnvSchema, demoChainEnv(process.env, devnetNetwork, devnet.rpcUrl));
}

// A first run has no key yet, and with the embedded store no other process may open it to make
// one: create a demo key and show it once.
let newKey: string | null = null;
if ((await apiKeys.list(db)).every((k) => k.revokedAt)) {
  const { key, prefix, hash } = generateApiKey();
  await apiKeys.insert(db, { prefix, hash, name: 'demo' });
  newKey = key;
  // In JSON logs (no banner) this line is the only place the key appears.
  if (!isPretty(config.LOG_FORMAT)) log.info({ prefix }, 'created an API key "demo" (shown only now): %s', key);
}

// Each request's access line is at debug here: the terminal shows what a person acts on.
const server = await startWeb({ db, config, log, accessLogLevel: 'debug' }, config.PORT);
shutdown.add('web', () => closeServer(server));
indexerMetrics.watch(db, config.networks);
dispatcherMetrics.watch(db);
const indexer = startIndexer({ db, config, log });
shutdown.add('indexer', () => indexer.stop());
const dispatcher = await startDispatcher({ db, config, log });
shutdown.add('dispatcher', () => dispatcher.stop());
startUp.done();

/** The newest indexed op of `chainId`, once there is one (or null after FIRST_OP_WAIT_MS). */
async function firstIndexedOp(chainId: number): Promise<string | null> {
  const until = Date.now() + FIRST_OP_WAIT_MS;
  while (Date.now() < until) {
    const [latest] = await userOps.listLatest(db, chainId, { first: 1, skip: 0 });
    if (latest) return latest.userOpHash;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return null;
}

const url = `http://127.0.0.1:${config.PORT}`;
const network = config.networks[0]!;
const facts = {
  url,
  network: network.name,
  newKey,
  userOpHash: await firstIndexedOp(network.chainId),
  store: db.kind === 'postgres' ? 'PostgreSQL' : `PGlite in ${config.DATA_DIR}`,
  sharedStore: db.kind === 'postgres',
  demoChain,
};
if (isPretty(config.LOG_FORMAT)) {
  const live = terminalLiveLines();
  if (live) live.write(`${banner(facts)}\n`);
  else process.stdout.write(`${banner(facts)}\n`);
} else {
  log.info(
    {
      url,
      statusPage: `${url}/`,
      docs: `${url}/docs`,
      store: db.kind,
      networks: config.networks.map((n) => n.name),
      examples: exampleCommands(facts),
    },
    'opscan is running',
  );
}
