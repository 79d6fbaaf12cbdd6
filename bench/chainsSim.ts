/**
 * Chain simulators in a process of their own, for bench/chains.ts (their CPU is then read apart
 * from the indexer's): `node --import tsx bench/chainsSim.ts '<SimChainOptions as JSON>'`, or a JSON
 * array of them to serve several networks from one process (the many-networks run: 21 processes
 * would crowd a 2-core machine more than the chains they serve). Each chain is numbered by its place
 * in the list (`chain`, 0 for a single one). It prints one JSON line per chain with its URLs and
 * head, then `{"chain": i, "head": n}` each time a head moves, and `{"stats": […]}` (each chain's
 * calls by method, bytes) for each line it reads on stdin; it stops when stdin closes, so it never
 * outlives the bench.
 */
import { createInterface } from 'node:readline';
import { startSimChain, type SimChainOptions } from '../simchain/server.js';

/** How often the heads are looked at: a few ms of delay on a lag sample, nothing against a 250 ms block. */
const HEAD_POLL_MS = 20;

const say = (value: unknown): boolean => process.stdout.write(`${JSON.stringify(value)}\n`);

const given = JSON.parse(process.argv[2] ?? '{}') as SimChainOptions | SimChainOptions[];
const chains = await Promise.all([given].flat().map((options) => startSimChain({ ...options, port: 0 })));
const heads = chains.map((chain) => chain.head());
chains.forEach((chain, i) => say({ chain: i, url: chain.url, wsUrl: chain.wsUrl, chainId: chain.chainId, head: heads[i] }));
setInterval(() => {
  chains.forEach((chain, i) => {
    if (chain.head() === heads[i]) return;
    heads[i] = chain.head();
    say({ chain: i, head: heads[i] });
  });
}, HEAD_POLL_MS);
createInterface({ input: process.stdin })
  .on('line', () => say({ stats: chains.map((chain) => chain.stats()) }))
  .on('close', () => void Promise.all(chains.map((chain) => chain.close())).then(() => process.exit(0)));
