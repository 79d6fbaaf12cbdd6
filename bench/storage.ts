/**
 * `npm run bench -- storage`: bytes per user op on disk, per table and per index, with
 * the previous release beside this tree in the same run.
 *
 * One realistic devnet (devnet/realistic: Alto bundlers, real accounts and paymasters) is generated
 * to the largest size of BENCH_STORAGE_OPS; each size is the chain up to the block of its last op
 * (a proxy caps the head the indexers see there); with BENCH_STORAGE_CHAIN=<profile> the chain
 * simulator's history of that profile (e.g. base) instead, as many blocks as the sizes need. At each size two indexers catch up, each on its own
 * PostgreSQL database, each with the shipped settings (only the chain, the store and the log level
 * set; `node --max-old-space-size=256` as the Procfile runs it):
 *  - before: the release at BENCH_STORAGE_PREVIOUS (default 80fb135), extracted with `git archive`
 *    into bench/out/ (node_modules linked), migrated by its own bin/migrate.ts;
 *  - after: this tree, migrated by this tree's migrations.
 * When an indexer is at the head (its cursor at the chain's head, no known address waiting for its
 * transfer backfill) it is stopped, the database is `VACUUM (ANALYZE)`d and every relation is
 * measured: heap (main, free-space and visibility maps), TOAST (its heap and index) and each index,
 * partitions summed into their parent table and index (tables are partitioned by chain).
 * At the last size the previous release's database is then migrated in place by this tree's
 * migrations (timed; per million ops extrapolated) and measured again. On this tree's side (after,
 * migrated) its dispatcher then matches the outbox and prunes it at OUTBOX_RETENTION_HOURS=0: the
 * figures are those of ops older than the retention window (a day by default).
 *
 * Per op = bytes / ops indexed. Fixed pages (an empty index is 8-16 kB, a table's first pages) weigh
 * on a small database, so the marginal figure between two sizes is the one to extrapolate.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { generateRealistic, startRealisticDevnet } from '../devnet/realistic/index.js';
import { envSuffix } from '../shared/networks.js';
import { findProfile } from '../simchain/profiles.js';
import { startSimChain } from '../simchain/server.js';
import { createDb } from '../shared/db/client.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/log.js';
import { pruneOutbox } from '../webhooks/pruneDeliveries.js';
import { emptyDatabase, round } from './indexer.js';
import { ROOT } from './procfile.js';

export type StorageBenchOptions = {
  databaseUrl: string | undefined;
  /** BENCH_STORAGE_OPS (default 300,1000, ascending): the sizes measured (the realistic generator refuses ops now and then past about 1,000). */
  sizes?: number[];
  /** BENCH_STORAGE_CHAIN (default realistic): the realistic devnet, or a chain simulator profile (base, polygon, …). */
  chain?: string;
  /** BENCH_STORAGE_PREVIOUS (default 80fb135): the release measured as "before". */
  previousCommit?: string;
};

/** One relation group as measured: a table (partitions summed) and its indexes. */
export type TableBytes = { table: string; heap: number; toast: number; indexes: Record<string, number> };

/** Sizes after VACUUM (ANALYZE), partitions summed into their root table and root index. */
export async function measureTables(db: pg.Client): Promise<TableBytes[]> {
  await db.query('vacuum (analyze)');
  const tables = await db.query<{ table: string; heap: string; toast: string }>(
    `select coalesce(pg_partition_root(c.oid), c.oid)::regclass::text as table,
            sum(pg_relation_size(c.oid, 'main') + pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm')) as heap,
            sum(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) as toast
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'r'
      group by 1`,
  );
  const indexes = await db.query<{ table: string; index: string; bytes: string }>(
    `select coalesce(pg_partition_root(x.indrelid), x.indrelid)::regclass::text as table,
            coalesce(pg_partition_root(x.indexrelid), x.indexrelid)::regclass::text as index,
            sum(pg_relation_size(x.indexrelid)) as bytes
       from pg_index x join pg_class i on i.oid = x.indexrelid join pg_namespace n on n.oid = i.relnamespace
      where n.nspname = 'public' and i.relkind = 'i'
      group by 1, 2`,
  );
  return tables.rows
    .map((t) => ({
      table: t.table,
      heap: Number(t.heap),
      toast: Number(t.toast),
      indexes: Object.fromEntries(indexes.rows.filter((i) => i.table === t.table).map((i) => [i.index, Number(i.bytes)])),
    }))
    .sort((a, b) => a.table.localeCompare(b.table));
}

const totalOf = (t: TableBytes): number => t.heap + t.toast + Object.values(t.indexes).reduce((s, b) => s + b, 0);

/** A database of its own on the bench's server; `url` for the indexer, `client` for measuring. */
async function freshDatabase(databaseUrl: string, name: string): Promise<{ url: string; client: pg.Client; drop(): Promise<void> }> {
  const database = await emptyDatabase(databaseUrl, name);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    url: database.url,
    client,
    async drop() {
      await client.end();
      await database.drop();
    },
  };
}

/** The tree of `commit` as files (no git metadata), node_modules linked to this tree's. */
function extractRelease(commit: string): { root: string; cleanup(): void } {
  mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
  const root = mkdtempSync(join(ROOT, 'bench/out/release-'));
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C ${root}`], { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  if (existsSync(join(ROOT, 'client/node_modules')) && existsSync(join(root, 'client')))
    symlinkSync(join(ROOT, 'client/node_modules'), join(root, 'client/node_modules'));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** `node [flags] --import tsx <program>` in `root`: a tree's own code as its Procfile line runs it. */
function runTs(root: string, program: string, env: NodeJS.ProcessEnv) {
  return spawn(process.execPath, ['--max-old-space-size=256', '--import', 'tsx', program], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * Runs the tree's indexer on the devnet until it is at `head` with no known address waiting for its
 * transfer backfill, then stops it (SIGTERM, as a deploy would); answers the time and the ops stored.
 */
async function indexUntilHead(
  root: string,
  db: { url: string; client: pg.Client },
  { network, startBlock, rpcUrl, head }: { network: string; startBlock: number; rpcUrl: string; head: number },
): Promise<{ seconds: number; ops: number }> {
  const started = performance.now();
  const child = runTs(root, 'indexer/main.ts', {
    DATABASE_URL: db.url,
    NETWORKS: network,
    [`RPC_URL_${envSuffix(network)}`]: rpcUrl,
    [`START_BLOCK_${envSuffix(network)}`]: String(startBlock),
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    INDEXER_TRACES: '',
    INDEXER_TRANSFERS: '',
    METRICS_PORT: '',
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      const early = await Promise.race([exited, new Promise((r) => setTimeout(r, 500, 'polling'))]);
      if (early !== 'polling') throw new Error(`the indexer in ${root} exited (${String(early)}) before block ${head}`);
      const { rows } = await db.client.query<{ indexed: string | null; ops: string; waiting: string }>(
        `select (select indexed_block from indexer_state limit 1) as indexed,
                (select count(*) from user_ops) as ops,
                (select count(*) from known_addresses where backfilled_to is null) as waiting`,
      );
      const at = rows[0]!;
      if (at.indexed !== null && Number(at.indexed) >= head && Number(at.waiting) === 0)
        return { seconds: (performance.now() - started) / 1000, ops: Number(at.ops) };
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * This tree's dispatcher (no webhooks: its matcher only moves the chain's cursor) until it has
 * passed every outbox event, then its outbox pruning at OUTBOX_RETENTION_HOURS=0: what a database
 * holds once its ops are older than the retention window.
 */
async function matchAndPruneOutbox(db: { url: string; client: pg.Client }, network: string): Promise<number> {
  // Finality depth 0: the events of the last blocks are matched now rather than once the chain has
  // moved on (this chain stands still); the outcome is the same for every event.
  const child = runTs(ROOT, 'webhooks/main.ts', {
    DATABASE_URL: db.url,
    NETWORKS: network,
    [`FINALITY_DEPTH_${envSuffix(network)}`]: '0',
    LOG_LEVEL: 'warn',
    METRICS_PORT: '',
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      const early = await Promise.race([exited, new Promise((r) => setTimeout(r, 500, 'polling'))]);
      if (early !== 'polling') throw new Error(`the dispatcher exited (${String(early)})`);
      const { rows } = await db.client.query<{ done: boolean }>(
        `select coalesce((select max(last_event_id) from webhook_outbox_cursors), -1) >= coalesce((select max(id) from outbox_events), 0) as done`,
      );
      if (rows[0]!.done) break;
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  const pruner = await createDb({ databaseUrl: db.url, max: 1 });
  try {
    return await pruneOutbox(pruner, createLogger({ level: 'warn', name: 'bench-storage' }), new Date(), 0);
  } finally {
    await pruner.close();
  }
}

/**
 * A loopback JSON-RPC proxy answering eth_blockNumber with at most `cap`: an indexer behind it sees
 * the chain as it stood at block `cap` (it reads nothing above its head).
 */
async function startCappedHeadProxy(upstream: string, cap: number): Promise<{ url: string; stop(): Promise<void> }> {
  type Call = { id?: unknown; method?: string };
  type Answer = { id?: unknown; result?: unknown };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const calls = [JSON.parse(body.toString()) as Call | Call[]].flat();
      const capped = new Set(calls.filter((c) => c.method === 'eth_blockNumber').map((c) => c.id));
      fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (r) => {
          const answer = (await r.json()) as Answer | Answer[];
          for (const a of [answer].flat())
            if (capped.has(a.id) && typeof a.result === 'string') a.result = `0x${Math.min(Number(a.result), cap).toString(16)}`;
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Measured = { label: string; ops: number; totalBytes: number; bytesPerOp: number; tables: TableBytes[] };

function measured(label: string, ops: number, tables: TableBytes[]): Measured {
  const totalBytes = tables.reduce((s, t) => s + totalOf(t), 0);
  return { label, ops, totalBytes, bytesPerOp: Math.round(totalBytes / ops), tables };
}

/** Rows of the printed breakdown: per table and per index, bytes per op before and after, with shares. */
function breakdown(before: Measured, after: Measured): Array<Record<string, string | number>> {
  const names = [...new Set([...before.tables, ...after.tables].map((t) => t.table))];
  const rowsOf = (m: Measured, table: string): Record<string, number> => {
    const t = m.tables.find((x) => x.table === table);
    if (!t) return {};
    return {
      [table]: totalOf(t),
      [`  heap`]: t.heap,
      [`  toast`]: t.toast,
      ...Object.fromEntries(Object.entries(t.indexes).map(([i, b]) => [`  ${i}`, b])),
    };
  };
  const rows: Array<Record<string, string | number>> = [];
  for (const table of names) {
    const b = rowsOf(before, table);
    const a = rowsOf(after, table);
    if ((b[table] ?? 0) + (a[table] ?? 0) < 0.001 * Math.min(before.totalBytes, after.totalBytes)) continue; // below 0.1 %
    for (const key of [...new Set([...Object.keys(b), ...Object.keys(a)])]) {
      if (key.trim() === 'toast' && !b[key] && !a[key]) continue;
      rows.push({
        relation: key,
        beforePerOp: round((b[key] ?? 0) / before.ops, 0),
        beforeShare: `${round((100 * (b[key] ?? 0)) / before.totalBytes, 1)} %`,
        afterPerOp: round((a[key] ?? 0) / after.ops, 0),
        afterShare: `${round((100 * (a[key] ?? 0)) / after.totalBytes, 1)} %`,
      });
    }
  }
  rows.push({ relation: 'total', beforePerOp: before.bytesPerOp, beforeShare: '100 %', afterPerOp: after.bytesPerOp, afterShare: '100 %' });
  return rows;
}

/** Per table: bytes per op (all of its relations) and share of the total, for the summary. */
function perTable(m: Measured): Record<string, number> {
  return Object.fromEntries(m.tables.filter((t) => totalOf(t) >= 0.005 * m.totalBytes).map((t) => [t.table, round(totalOf(t) / m.ops, 0)]));
}

/** Per table, the bytes added per op between two sizes of one side (what a larger database pays). */
function marginalPerTable(small: Measured, large: Measured): Record<string, number> {
  const bytesOf = (m: Measured, table: string) => {
    const t = m.tables.find((x) => x.table === table);
    return t ? totalOf(t) : 0;
  };
  const grown = large.tables.map((t) => [t.table, (bytesOf(large, t.table) - bytesOf(small, t.table)) / (large.ops - small.ops)] as const);
  return Object.fromEntries(grown.filter(([, perOp]) => Math.abs(perOp) >= 8).map(([table, perOp]) => [table, round(perOp, 0)]));
}

/** The chain measured: where the indexers read it, and its head when it holds `size` ops. */
type Traffic = {
  network: string;
  startBlock: number;
  rpcUrl: string;
  headAt(size: number): number;
  generationErrors: string[];
  stop(): Promise<void>;
};

/**
 * The realistic devnet generated once to `ops` (the generator does not always take a second call
 * on the same chain well); a smaller size is the chain up to the block of its last op.
 */
async function realisticTraffic(ops: number, say: (text: string) => void): Promise<Traffic> {
  const rd = await startRealisticDevnet({ seed: 34 });
  const generationErrors: string[] = [];
  const started = performance.now();
  while (rd.devnet.truth.userOps.length < ops) {
    try {
      await generateRealistic(rd, { ops: ops - rd.devnet.truth.userOps.length });
    } catch (err) {
      // A bundler's rare refusal (devnet/realistic/traffic.ts sendOp) ends a call; the chain stands
      // and the next call goes on. What was mined is counted from the stores, not the truth.
      generationErrors.push((err as Error).message.split('\n')[0]!);
      say(`generation: ${generationErrors.at(-1)}`);
      if (generationErrors.length > 5) {
        await rd.stop();
        throw err;
      }
    }
  }
  const head = Number(await rd.devnet.rpc.call<string>('eth_blockNumber'));
  const opBlocks = rd.devnet.truth.userOps.map((o) => o.blockNumber).sort((a, b) => a - b);
  say(`${opBlocks.length} ops generated in ${round((performance.now() - started) / 1000, 0)} s (head ${head})`);
  return {
    network: 'devnet',
    startBlock: 0,
    rpcUrl: rd.devnet.rpcUrl,
    headAt: (size) => (size >= opBlocks.length ? head : opBlocks[size - 1]!),
    generationErrors,
    stop: () => rd.stop(),
  };
}

/** The chain simulator's `profile` (e.g. base): a fixed history ending at its real height, long enough for `ops`. */
async function simulatedTraffic(profile: string, ops: number): Promise<Traffic> {
  const { bundlesPerBlock, opsPerBundle, defaultFromBlock } = findProfile(profile);
  const opsPerBlock = bundlesPerBlock * opsPerBundle;
  const blocks = Math.ceil(ops / opsPerBlock);
  const fromBlock = defaultFromBlock - blocks + 1;
  const sim = await startSimChain({ profile, fromBlock, blocks, blockTimeMs: 0, port: 0 });
  return {
    network: profile,
    startBlock: fromBlock,
    rpcUrl: sim.url,
    headAt: (size) => fromBlock + Math.ceil(size / opsPerBlock) - 1,
    generationErrors: [],
    stop: () => sim.close(),
  };
}

export async function runStorageBench(options: StorageBenchOptions): Promise<Record<string, unknown>> {
  if (!options.databaseUrl) throw new Error('the storage bench runs on PostgreSQL: set BENCH_DATABASE_URL (or DATABASE_URL)');
  const sizes = options.sizes ?? [300, 1000];
  const previousCommit = options.previousCommit ?? '80fb135';
  const say = (text: string) => process.stderr.write(`[storage] ${text}\n`);
  const release = extractRelease(previousCommit);
  const before = await freshDatabase(options.databaseUrl, 'opscan_bench_storage_before');
  const after = await freshDatabase(options.databaseUrl, 'opscan_bench_storage_after');
  let traffic: Traffic | undefined;
  try {
    // Each side migrated by its own code: the previous release's bin/migrate.ts, this tree's migrate().
    await new Promise<void>((resolve, reject) =>
      runTs(release.root, 'bin/migrate.ts', { DATABASE_URL: before.url, LOG_LEVEL: 'warn' }).once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`the previous release's migrate exited ${code}`)),
      ),
    );
    const afterDb = await createDb({ databaseUrl: after.url, max: 1 });
    await migrate(afterDb);
    await afterDb.close();

    const runs: Measured[] = [];
    const find = (label: string) => runs.find((r) => r.label === label)!;
    const indexSeconds: Record<string, number> = {};
    const outboxPruned: Record<string, number> = {};
    const last = sizes.at(-1)!;
    const chain = options.chain ?? 'realistic';
    traffic = chain === 'realistic' ? await realisticTraffic(last, say) : await simulatedTraffic(chain, last);
    const { network, startBlock } = traffic;
    for (const size of sizes) {
      const head = traffic.headAt(size);
      const proxy = await startCappedHeadProxy(traffic.rpcUrl, head);
      try {
        for (const [label, root, db] of [
          ['before', release.root, before],
          ['after', ROOT, after],
        ] as const) {
          const indexed = await indexUntilHead(root, db, { network, startBlock, rpcUrl: proxy.url, head });
          indexSeconds[`${label}@${size}`] = round(indexed.seconds, 1);
          // The previous release never deleted outbox rows; this tree's dispatcher does, past its retention.
          if (label === 'after') outboxPruned[`${label}@${size}`] = await matchAndPruneOutbox(db, network);
          runs.push(measured(`${label}@${size}`, indexed.ops, await measureTables(db.client)));
          say(`${label}@${size}: ${indexed.ops} ops to block ${head}, ${runs.at(-1)!.bytesPerOp} bytes per op`);
        }
      } finally {
        await proxy.stop();
      }
      if (find(`before@${size}`).ops !== find(`after@${size}`).ops)
        throw new Error(`at ${size}: ${find(`before@${size}`).ops} ops stored before, ${find(`after@${size}`).ops} after`);
    }
    // The previous release's database, migrated in place by this tree's migrations.
    const first = sizes[0]!;
    const opsAtEnd = find(`before@${last}`).ops;
    const beforeDb = await createDb({ databaseUrl: before.url, max: 1 });
    const migrateStarted = performance.now();
    const applied = await migrate(beforeDb);
    const migrateSeconds = (performance.now() - migrateStarted) / 1000;
    await beforeDb.close();
    outboxPruned[`migrated@${last}`] = await matchAndPruneOutbox(before, network);
    const migrated = measured(`migrated@${last}`, opsAtEnd, await measureTables(before.client));
    runs.push(migrated);

    const marginal = (side: string): number | null => {
      const [small, large] = [find(`${side}@${first}`), find(`${side}@${last}`)];
      return first === last ? null : Math.round((large.totalBytes - small.totalBytes) / (large.ops - small.ops));
    };
    const beforeLast = find(`before@${last}`);
    const afterLast = find(`after@${last}`);
    const marginalPerTableBytes =
      first === last
        ? null
        : {
            before: marginalPerTable(find(`before@${first}`), beforeLast),
            after: marginalPerTable(find(`after@${first}`), afterLast),
          };
    console.log(`\nstorage per op at ${last} ops (bytes; share of the total), previous release ${previousCommit} against this tree:`);
    console.table(breakdown(beforeLast, afterLast));
    console.log(`previous release at ${last} ops, migrated in place by this tree (${round(migrateSeconds, 1)} s):`);
    console.table(breakdown(beforeLast, migrated));
    if (marginalPerTableBytes) {
      console.log(`marginal bytes per op, ${first} → ${last} ops, per table (tables that grow 8 bytes per op or more):`);
      const tables = [...new Set([...Object.keys(marginalPerTableBytes.before), ...Object.keys(marginalPerTableBytes.after)])];
      console.table(
        tables.map((table) => ({
          table,
          before: marginalPerTableBytes.before[table] ?? 0,
          after: marginalPerTableBytes.after[table] ?? 0,
        })),
      );
    }
    return {
      summary: {
        ops: opsAtEnd,
        bytesPerOpBefore: beforeLast.bytesPerOp,
        bytesPerOpAfter: afterLast.bytesPerOp,
        bytesPerOpMigrated: migrated.bytesPerOp,
        marginalBytesPerOpBefore: marginal('before'),
        marginalBytesPerOpAfter: marginal('after'),
        afterToBefore: round(afterLast.bytesPerOp / beforeLast.bytesPerOp),
        migrateSeconds: round(migrateSeconds, 2),
        migrateSecondsPerMillionOps: round((migrateSeconds / opsAtEnd) * 1e6, 0),
      },
      previousCommit,
      sizes,
      migrationsApplied: applied,
      indexSeconds,
      chain,
      generationErrors: traffic?.generationErrors,
      outboxPruned,
      outboxRetention: 'after and migrated: OUTBOX_RETENTION_HOURS=0 (the steady state beyond the window); before: every row kept',
      perTableBytesPerOp: { before: perTable(beforeLast), after: perTable(afterLast), migrated: perTable(migrated) },
      marginalPerTableBytesPerOp: marginalPerTableBytes,
      runs,
    };
  } finally {
    await traffic?.stop();
    // BENCH_STORAGE_KEEP=1 leaves both databases for a look at their plans (EXPLAIN, pg_stat_user_indexes).
    if (process.env.BENCH_STORAGE_KEEP !== '1') await Promise.all([before.drop(), after.drop()]);
    release.cleanup();
  }
}
