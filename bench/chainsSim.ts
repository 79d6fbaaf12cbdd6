/**
 * One chain simulator in its own process, for bench/chains.ts (its CPU is then read apart from the
 * indexer's): `node --import tsx bench/chainsSim.ts '<SimChainOptions as JSON>'`. It prints one
 * JSON line with its URLs and head, then `{"head": n}` each time the head moves, and
 * `{"stats": …}` (calls by method, bytes) for each line it reads on stdin; it stops when stdin
 * closes, so it never outlives the bench.
 */
import { createInterface } from 'node:readline';
import { startSimChain, type SimChainOptions } from '../simchain/server.js';

/** How often the head is looked at: a few ms of delay on a lag sample, nothing against a 250 ms block. */
const HEAD_POLL_MS = 20;

const say = (value: unknown): boolean => process.stdout.write(`${JSON.stringify(value)}\n`);

const chain = await startSimChain({ ...(JSON.parse(process.argv[2] ?? '{}') as SimChainOptions), port: 0 });
let head = chain.head();
say({ url: chain.url, wsUrl: chain.wsUrl, chainId: chain.chainId, head });
setInterval(() => {
  if (chain.head() === head) return;
  head = chain.head();
  say({ head });
}, HEAD_POLL_MS);
createInterface({ input: process.stdin })
  .on('line', () => say({ stats: chain.stats() }))
  .on('close', () => void chain.close().then(() => process.exit(0)));
