/**
 * `npm run bench [-- part…]`: runs every benchmark part (or the named ones) and prints its numbers.
 * Parts use PostgreSQL when BENCH_DATABASE_URL (or DATABASE_URL) is set, else PGlite.
 * A new part = one entry in PARTS.
 */
import { DEFAULT_API_BENCH, runApiBench } from './api.js';
import { runWebhookBench } from './webhooks.js';
import { runIndexerBench } from './indexer.js';

const databaseUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || undefined;

const PARTS: Record<string, () => Promise<unknown>> = {
  api: () =>
    runApiBench({
      databaseUrl,
      redisUrl: process.env.REDIS_URL || undefined,
      // BENCH_API_OPS=100000,1000000 (ascending): the sizes measured one after the other.
      sizes: process.env.BENCH_API_OPS ? process.env.BENCH_API_OPS.split(',').map(Number) : DEFAULT_API_BENCH.sizes,
    }),
  webhooks: () => runWebhookBench({ databaseUrl }),
  // BENCH_INDEXER_OPS (default 20000): devnet ops generated, then backfilled and compared with a bare fetch.
  indexer: () => runIndexerBench({ databaseUrl, ops: Number(process.env.BENCH_INDEXER_OPS ?? 20_000) }),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in PARTS));
if (unknown.length > 0) {
  console.error(`unknown bench part(s): ${unknown.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(PARTS)) {
  const started = Date.now();
  const result = await PARTS[name]!();
  console.log(JSON.stringify({ part: name, seconds: (Date.now() - started) / 1000, result }, null, 2));
}
process.exit(0);
