import { z } from 'zod';
import { ConfigError } from './errors.js';
import { parseDatabaseUrl, splitDatabaseUrls } from './db/hosts.js';
import { LOG_FORMATS } from './log.js';
import { envSuffix, findNetwork, type EntryPointVersion, type NetworkInfo } from './networks.js';
import { CANONICAL_ENTRYPOINTS } from './chain/constants.js';

/**
 * Configuration comes from the environment only. `loadConfig` is pure (it takes the env as an
 * argument), so tests call it freely; each process's `main.ts` is the only caller that passes
 * `process.env`. A bad environment fails with one ConfigError listing every bad variable.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const port = z.coerce.number().int().min(0).max(65535);

/** A PostgreSQL URL, one host or several the libpq way (`postgres://h1:5432,h2:5432/db?target_session_attrs=read-write`). */
const databaseUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
  .superRefine((url, ctx) => {
    try {
      parseDatabaseUrl(url);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

/** Variables every process reads. */
export const baseEnvSchema = z.object({
  DATABASE_URL: databaseUrl
    .optional()
    .describe(
      'PostgreSQL connection URL; several hosts the libpq way follow a failover (postgres://h1:5432,h2:5432/db?target_session_attrs=read-write). Unset: embedded PGlite in DATA_DIR.',
    ),
  DATA_DIR: z.string().min(1).default('./.data').describe('Folder of the embedded PGlite store.'),
  DB_STARTUP_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(60_000)
    .describe(
      'How long a process starting while PostgreSQL is unreachable waits for it (retrying with back-off) before it exits; 0: exit at once. Outages after the start are waited out without a bound.',
    ),
  DB_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30_000)
    .describe(
      "Longest one statement of the indexer and the dispatcher may run (PostgreSQL's statement_timeout; the web's is 5 s, or this if lower). The client waits 1 s more for an answer; a server silent by then (paused, hung) counts as an outage and the connection is closed. 0: no limit.",
    ),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info').describe('Log level.'),
  LOG_FORMAT: z
    .enum(LOG_FORMATS)
    .default('auto')
    .describe('Log format: json, pretty (human-readable), or auto (pretty on a terminal, JSON otherwise).'),
  NETWORKS: z
    .string()
    .default('devnet')
    .describe('Comma list of network names to index and serve (see getNetworks; `devnet` is the local chain).'),
  DEFAULT_NETWORK: z
    .string()
    .optional()
    .describe(
      'Network of API requests that name none and ask by address, block or nothing (requests by hash search every network). Unset: the only network of NETWORKS; with several, such requests must name theirs.',
    ),
  REDIS_URL: z
    .string()
    .regex(/^(rediss?|redis-cluster|rediss-cluster):\/\//, 'must be a redis://, rediss:// or redis-cluster://host:port,host:port URL')
    .optional()
    .describe(
      'Redis URL for the cache and rate limiter; redis-cluster://host:port,host:port names a Redis Cluster by its seed nodes. Unset: in-process cache and limiter.',
    ),
  REDIS_CLUSTER: boolean
    .default(false)
    .describe('Treat REDIS_URL (a redis:// or rediss:// URL, or a comma list of them) as the seed nodes of a Redis Cluster.'),
});

/** Webhook settings read by both the web process (createWebhook) and the dispatcher. */
const webhookEnv = {
  WEBHOOK_ALLOW_PRIVATE_URLS: boolean
    .default(false)
    .describe(
      'Allow http:// and private/loopback webhook targets. For development and tests only; npm start turns it on for its demo chain unless set.',
    ),
  WEBHOOK_SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, 'must be 32 bytes as 64 hex characters or base64')
    .optional()
    .describe('Key (32 bytes, hex or base64) encrypting webhook signing secrets. Unset: generated once, kept in the database.'),
};

/** API serving: limits, cache, prices (web process). */
const apiEnv = {
  RATE_LIMIT_PER_SECOND: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10)
    .describe(
      'Requests per second per API key (plus a burst reserve of twice that per 10 s); api_keys.rate_limit_per_second overrides it per key.',
    ),
  USAGE_METERING: z
    .enum(['on', 'off'])
    .default('on')
    .describe(
      'Count every call made with an API key per key, hour, endpoint, network and status class (table api_key_usage); off: none is counted.',
    ),
  USAGE_FLUSH_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(5000)
    .describe('How often a web process adds the usage it counted in memory to api_key_usage (one batch; also on shutdown).'),
  USAGE_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(90)
    .describe('Hours of api_key_usage older than this many days are deleted (checked hourly).'),
  CACHE_FINAL_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(86_400)
    .describe('How long answers about finalised blocks stay cached (head-dependent answers live about one block).'),
  REDIS_KEY_PREFIX: z.string().default('opscan:').describe('Prefix of every Redis key the web process writes.'),
  PRICE_SOURCE_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('URL answering JSON {SYMBOL: USD price} (e.g. {"ETH": 3120.5}), read at most once a minute. Unset: price fields are null.'),
  TRUST_PROXY: z.coerce
    .number()
    .int()
    .min(0)
    .max(10)
    .default(0)
    .describe('Reverse proxies in front of the web process (1 on Heroku); the client IP of keyless calls is read behind them.'),
};

/** Who may read /metrics (every process). */
const metricsTokenEnv = {
  METRICS_TOKEN: z
    .string()
    .min(16)
    .optional()
    .describe('Bearer token required by GET /metrics. Unset: /metrics is open (it holds counters only).'),
};

/** The indexer's and the dispatcher's small HTTP server: /metrics, /healthz, /readyz. */
const opsEnv = {
  ...metricsTokenEnv,
  METRICS_PORT: port
    .optional()
    .describe(
      'Port on which the indexer or dispatcher serves /metrics, /healthz and /readyz. Unset: not served (npm start serves them on PORT).',
    ),
};

/** Read replicas of the web process. */
const readReplicaEnv = {
  DATABASE_READ_URL: z
    .string()
    .transform(splitDatabaseUrls)
    .pipe(z.array(databaseUrl).min(1))
    .optional()
    .describe(
      "Comma list of PostgreSQL read replicas (streaming standbys of DATABASE_URL) for the web process's reads, each URL one host or several the libpq way (e.g. target_session_attrs=prefer-standby); writes and read-your-writes endpoints stay on DATABASE_URL. Unset: every read goes to DATABASE_URL.",
    ),
  READ_REPLICA_MAX_LAG_SECONDS: z.coerce
    .number()
    .min(0)
    .default(5)
    .describe('A read replica whose replay is further behind than this is skipped until it catches up.'),
};

/** The web process (REST + tRPC). */
export const webEnvSchema = baseEnvSchema.extend({
  PORT: port.default(3000).describe('HTTP port of the web process.'),
  ...readReplicaEnv,
  ...apiEnv,
  ...metricsTokenEnv,
  ...webhookEnv,
  WEBHOOK_MAX_PER_KEY: z.coerce.number().int().min(1).default(100).describe('Most webhooks one API key may have.'),
  ADMIN_TOKEN: z
    .string()
    .min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)')
    .optional()
    .describe(
      'Operator token of the admin API (/admin/v1: keys, plans, usage), sent as Authorization: Bearer <token>; at least 32 characters. Unset: the admin API is off (404).',
    ),
});

/** INDEXER_DELEGATIONS, and INDEXER_DELEGATIONS_<NETWORK> over it for one network. */
const delegationsSetting = z
  .enum(['ops', 'all'])
  .describe(
    "Whose EIP-7702 authorizations the indexer stores (getAccountDelegations): ops = those of the bundle transactions it reads anyway; all = those of every type-4 transaction of the chain (an EOA's own, a reverted bundle's), which reads every block whole (eth_getBlockByNumber with transactions, one per block). Either way each authorization that names the chain and recovers costs one eth_getTransactionCount (its authority's nonce before the block). INDEXER_DELEGATIONS_<NETWORK> sets it for one network.",
  );

/** The indexer process. */
export const indexerEnvSchema = baseEnvSchema.extend({
  ...opsEnv,
  INDEXER_POLL_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(3_600_000)
    .default(2_000)
    .describe(
      "How often the indexer polls each network's head (eth_blockNumber), counted from its last indexing pass. With a WebSocket (RPC_WS_URL_<NETWORK>, or a ws:// RPC_URL_<NETWORK>) blocks are indexed as the node announces them and the poll only catches what the subscription missed.",
    ),
  INDEXER_TRACES: z
    .enum(['all', 'needed', 'off'])
    .default('needed')
    .describe(
      "When the indexer calls debug_traceTransaction: needed = only for bundles sent through another contract (multicall, smart bundler) whose calldata is not found inside the transaction input (found there, the ops' recomputed userOpHashes prove it); all = every bundle transaction, storing each op's execution trace as it indexes; off = never (ops of bundles not found in the input keep their event fields, decode_status trace_needed). Under needed and off, an op's execution trace is traced by the web process on its first request and stored.",
    ),
  INDEXER_TRANSFERS: z
    .enum(['ops', 'known'])
    .default('known')
    .describe(
      "Which token transfers the indexer stores: known = every ERC-20/721/1155 transfer to or from an address opscan knows (accounts, paymasters, bundlers, factories), plain transactions included, as an explorer's address page shows them (reads the chain's Transfer/TransferSingle/TransferBatch logs of each range, and each newly known address's earlier logs once); ops = only the transfers inside bundle transactions (reads the EntryPoints' logs alone).",
    ),
  INDEXER_DELEGATIONS: delegationsSetting.default('ops'),
  INDEXER_TRANSFER_LOOKBACK_BLOCKS: z.coerce
    .number()
    .int()
    .min(0)
    .default(100_000)
    .describe(
      'INDEXER_TRANSFERS=known: how many blocks before an address is first seen its token transfers are read (an account funded before its deployment, a paymaster topped up before its first op); later ones are read as the chain is indexed. 100,000 blocks is about 2.3 days on Base, 14 days on Ethereum, 7 hours on Arbitrum. Each newly known address costs the node three topic-filtered eth_getLogs over this window, for up to 100 addresses at a time.',
    ),
  INDEXER_NETWORKS: z
    .string()
    .optional()
    .describe(
      'Pins this indexer process to these networks (comma list, each one of NETWORKS): on PostgreSQL the indexer processes split the networks each may index evenly between them; unset, this process may index every network of NETWORKS.',
    ),
  INDEXER_NETWORK_HEAP_MB: z.coerce
    .number()
    .int()
    .min(32)
    .max(16_384)
    .default(256)
    .describe(
      'On PostgreSQL each network is indexed in a worker thread of its own: the V8 heap limit of each (MB). A worker that exhausts it is restarted with back-off; the other networks go on.',
    ),
  INDEXER_NETWORK_YOUNG_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_024)
    .optional()
    .describe(
      "Each network worker's V8 young generation (MB; 0 leaves it to V8). Unset: 16 for a process that may index one or two networks (fewer, larger collections: less CPU per op in a backfill), 8 for more (21 networks in 921 MB where V8's choice took 1,150).",
    ),
});

/** The webhook dispatcher process. */
export const dispatcherEnvSchema = baseEnvSchema.extend({
  ...opsEnv,
  ...webhookEnv,
  WEBHOOK_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(64)
    .describe('Webhook requests one dispatcher keeps in flight at once.'),
  OUTBOX_RETENTION_HOURS: z.coerce
    .number()
    .min(0)
    .max(8760)
    .default(24)
    .describe(
      "How long outbox events are kept once the dispatcher has matched them (its chain's cursor passed them, so they are past the reorg window); deleted hourly in batches. Replay and the deliveries list read webhook_deliveries (kept 30 days), never the outbox. 0: deleted at the next pass.",
    ),
});

/** `npm start`: every process of the Procfile in one, so it reads all of their variables, and its demo chain's. */
export const allInOneEnvSchema = webEnvSchema
  .extend(indexerEnvSchema.shape)
  .extend(dispatcherEnvSchema.shape)
  .extend({
    DEMO_TRAFFIC: z
      .enum(['realistic', 'generated'])
      .default('realistic')
      .describe(
        'Live traffic on the demo chain (npm start without RPC_URL_DEVNET): realistic = Alto bundlers, real accounts and paymasters ' +
          '(devnet --realistic); generated = the devnet generator alone (starts a few seconds sooner).',
      ),
  });

/** Per-network variables; NAME is the network name in upper case with `-` → `_`. */
export const networkEnvSchema = z.object({
  RPC_URL: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.url({ protocol: /^(https?|wss?)$/ })).min(1))
    .optional()
    .describe(
      'JSON-RPC URL of the network; a comma list gives failover. A ws:// or wss:// URL is subscribed to for new heads (unless RPC_WS_URL_<NETWORK> is set) and its http(s):// twin at the same address answers the calls, as anvil, reth and most providers serve both.',
    ),
  RPC_WS_URL: z
    .url({ protocol: /^wss?$/ })
    .optional()
    .describe(
      'WebSocket JSON-RPC URL of the network: the indexer subscribes to newHeads there and indexes each block as it is announced (polling goes on as the fallback). Unset: the first ws:// or wss:// RPC_URL_<NETWORK>, else polling alone.',
    ),
  BUNDLER_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      "An ERC-4337 bundler's JSON-RPC URL for the network (it may carry the provider's key; it is never shown): /rpc/<network> forwards there the methods it does not answer from the index (eth_sendUserOperation, gas estimates, the bundler's own methods), and a read of an op not yet indexed. Unset: those methods answer -32601.",
    ),
  START_BLOCK: z.coerce.number().int().min(0).optional().describe('First block to index.'),
  FINALITY_DEPTH: z.coerce.number().int().min(0).max(10_000).optional().describe('Reorg window in blocks.'),
  INDEXER_DELEGATIONS: delegationsSetting.optional(),
  ENTRYPOINTS: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^v0\.[6-9]:0x[0-9a-fA-F]{40}$/, 'each entry must be VERSION:ADDRESS, e.g. v0.7:0xabc…')))
    .optional()
    .describe('Extra EntryPoint addresses beside the canonical ones, as VERSION:ADDRESS (comma list).'),
});

export type EntryPointConfig = { address: string; version: EntryPointVersion };

export type NetworkConfig = NetworkInfo & {
  /** HTTP(S) JSON-RPC URLs (a ws:// RPC_URL is here as its http:// twin). */
  rpcUrls: string[];
  /** Where the indexer subscribes to newHeads (RPC_WS_URL, else a ws:// RPC_URL); absent: polling alone. */
  wsUrl?: string;
  /** BUNDLER_URL_<NETWORK>: where /rpc/<network> forwards what it does not answer (secret: never shown). */
  bundlerUrl?: string;
  startBlock?: number;
  entryPoints: EntryPointConfig[];
  /** INDEXER_DELEGATIONS_<NETWORK>: this network's INDEXER_DELEGATIONS (absent: the process's). */
  delegations?: 'ops' | 'all';
};

type Resolved<TSchema extends z.ZodType> = z.output<TSchema> & {
  networks: NetworkConfig[];
  /** DEFAULT_NETWORK, else the only network served; null when several are served and none is the default. */
  defaultNetwork: NetworkConfig | null;
};

export type BaseConfig = Resolved<typeof baseEnvSchema>;
export type WebConfig = Resolved<typeof webEnvSchema>;
export type IndexerConfig = Resolved<typeof indexerEnvSchema>;
export type DispatcherConfig = Resolved<typeof dispatcherEnvSchema>;

type Env = Record<string, string | undefined>;

/** Empty strings count as unset, as in most process managers' env files. */
function withoutEmpty(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
}

function issuesOf(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((i) => `${prefix}${i.path.join('.') || '(root)'}: ${i.message}`);
}

const isWebSocketUrl = (url: string): boolean => /^wss?:\/\//i.test(url);

/** The http(s):// URL at the address of a ws(s):// one (the same server answers both on most nodes). */
const httpTwin = (url: string): string => url.replace(/^ws(s?):\/\//i, 'http$1://');

function resolveNetworks(names: string, env: Env, problems: string[]): NetworkConfig[] {
  const networks: NetworkConfig[] = [];
  const seen = new Set<string>();
  for (const raw of names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)) {
    const info = findNetwork(raw);
    if (!info) {
      problems.push(`NETWORKS: unknown network "${raw}"`);
      continue;
    }
    if (seen.has(info.name)) continue;
    seen.add(info.name);
    const suffix = envSuffix(info.name);
    const own = Object.fromEntries(Object.keys(networkEnvSchema.shape).map((key) => [key, env[`${key}_${suffix}`]]));
    const parsed = networkEnvSchema.safeParse(own);
    if (!parsed.success) {
      problems.push(...parsed.error.issues.map((i) => `${String(i.path[0])}_${suffix}: ${i.message}`));
      continue;
    }
    const extra = (parsed.data.ENTRYPOINTS ?? []).map((entry) => {
      const [version, address] = entry.split(':') as [EntryPointVersion, string];
      return { version, address: address.toLowerCase() };
    });
    const canonical = Object.entries(CANONICAL_ENTRYPOINTS).map(([version, address]) => ({
      version: version as EntryPointVersion,
      address,
    }));
    const rpcUrls = parsed.data.RPC_URL ?? [];
    networks.push({
      ...info,
      rpcUrls: rpcUrls.map(httpTwin),
      wsUrl: parsed.data.RPC_WS_URL ?? rpcUrls.find(isWebSocketUrl),
      bundlerUrl: parsed.data.BUNDLER_URL,
      startBlock: parsed.data.START_BLOCK,
      ...(parsed.data.INDEXER_DELEGATIONS ? { delegations: parsed.data.INDEXER_DELEGATIONS } : {}),
      finalityDepth: parsed.data.FINALITY_DEPTH ?? info.finalityDepth,
      entryPoints: [...canonical, ...extra.filter((e) => !canonical.some((c) => c.address === e.address))],
    });
  }
  if (networks.length === 0 && problems.length === 0) problems.push('NETWORKS: lists no network');
  return networks;
}

function resolveDefaultNetwork(name: string | undefined, networks: NetworkConfig[], problems: string[]): NetworkConfig | null {
  if (name === undefined) return networks.length === 1 ? networks[0]! : null;
  const info = findNetwork(name);
  const served = networks.find((n) => n.name === info?.name);
  if (!served) problems.push(`DEFAULT_NETWORK: "${name}" is not one of NETWORKS (${networks.map((n) => n.name).join(', ')})`);
  return served ?? null;
}

/**
 * Validates `env` against a process's schema and resolves the per-network variables.
 * Throws one ConfigError naming every bad variable.
 */
export function loadConfig<TSchema extends typeof baseEnvSchema>(schema: TSchema, env: Env): Resolved<TSchema> {
  const clean = withoutEmpty(env);
  const problems: string[] = [];
  const parsed = schema.safeParse(clean);
  if (!parsed.success) problems.push(...issuesOf(parsed.error));
  const networks = resolveNetworks(parsed.success ? parsed.data.NETWORKS : (clean.NETWORKS ?? 'devnet'), clean, problems);
  const defaultNetwork = resolveDefaultNetwork(clean.DEFAULT_NETWORK, networks, problems);
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return Object.freeze({ ...parsed.data, networks, defaultNetwork }) as Resolved<TSchema>;
}

/** Every variable name a schema reads, for `.env.example` and the README table. */
export function documentedVariables(): Array<{ name: string; description: string }> {
  const schemas = [webEnvSchema, indexerEnvSchema, dispatcherEnvSchema, allInOneEnvSchema];
  const rows = new Map<string, string>();
  for (const schema of schemas) {
    for (const [name, field] of Object.entries(schema.shape)) {
      rows.set(name, (field as z.ZodType).description ?? '');
    }
  }
  for (const [name, field] of Object.entries(networkEnvSchema.shape)) {
    rows.set(`${name}_<NETWORK>`, (field as z.ZodType).description ?? '');
  }
  return [...rows].map(([name, description]) => ({ name, description }));
}
