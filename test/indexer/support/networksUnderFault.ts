/**
 * Simulated networks for the tests of networks side by side (test/indexer/supervisedNetworks.test.ts
 * and test/faults/networks.faults.ts): thin chain simulators of spec-map networks following their
 * head, the endpoints that fail one network in a given way, lag sampled as each head appears, and
 * each network's store compared with its simulator's truth up to where it is indexed, and the
 * networks' writer locks an indexer process holds.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { findProfile, type Profile } from '../../../simchain/profiles.js';
import { startSimChain, type SimChain } from '../../../simchain/server.js';
import type { Queryable } from '../../../shared/db/client.js';
import { envSuffix } from '../../../shared/networks.js';
import { expectMatchesTruth } from '../storedTruth.js';
import { indexedBlock } from '../support.js';
import { TOPICS } from '../../../shared/chain/constants.js';

/** A spec-map network thinned to a few logs a block (the tests follow several at once on 2 cores). */
export function thinProfile(network: string, blockTimeMs: number): Profile {
  return {
    ...findProfile(network),
    blockTimeMs,
    txPerBlock: 6,
    logsPerBlock: 12,
    bundlesPerBlock: 1,
    deploysPerBlock: 0.2,
    accounts: 300,
    holders: 200,
    tokens: 5,
    spamEvery: 0,
  };
}

export async function startThinChains(networks: string[], blockTimeMs: number): Promise<SimChain[]> {
  return Promise.all(networks.map((network) => startSimChain({ profile: thinProfile(network, blockTimeMs), port: 0 })));
}

/** The environment an indexer reads for these chains (each indexed from its head now), INDEXER_TRANSFERS=ops. */
export function chainsEnv(chains: SimChain[], rpcUrl: (chain: SimChain) => string = (c) => c.url): Record<string, string> {
  const env: Record<string, string> = {
    NETWORKS: chains.map((c) => c.profile.name).join(','),
    INDEXER_TRANSFERS: 'ops',
    INDEXER_POLL_INTERVAL_MS: '1000',
  };
  for (const chain of chains) {
    const suffix = envSuffix(chain.profile.name);
    env[`RPC_URL_${suffix}`] = rpcUrl(chain);
    if (rpcUrl(chain) === chain.url) env[`RPC_WS_URL_${suffix}`] = chain.wsUrl;
    env[`START_BLOCK_${suffix}`] = String(chain.head());
  }
  return env;
}

export type FaultyEndpoint = { url: string; requests(): number; stop(): Promise<void> };

async function listen(server: Server, sockets: Set<Socket>, counted: { n: number }): Promise<FaultyEndpoint> {
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => counted.n,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** An RPC endpoint that accepts every request and never answers it. */
export function startSilentEndpoint(): Promise<FaultyEndpoint> {
  const counted = { n: 0 };
  return listen(
    createServer(() => void counted.n++),
    new Set(),
    counted,
  );
}

/** An RPC endpoint answering HTTP 500 and non-JSON garbage in turn. */
export function startGarbageEndpoint(): Promise<FaultyEndpoint> {
  const counted = { n: 0 };
  return listen(
    createServer((req, res) => {
      req.resume();
      if (counted.n++ % 2 === 0) res.writeHead(500).end('internal error');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","result":[{"garbage');
    }),
    new Set(),
    counted,
  );
}

/**
 * A proxy in front of a chain whose bundle transactions' receipts are malformed (their last log
 * numbered out of sequence): the indexer's decoding of each bundle throws.
 */
export function startMalformedBundleProxy(upstream: string): Promise<FaultyEndpoint> {
  const counted = { n: 0 };
  const target = new URL(upstream);
  return listen(
    createServer((req, res) => {
      counted.n++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers = { 'content-type': 'application/json' };
        const up = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => res.writeHead(answer.statusCode ?? 200, headers).end(malformReceipts(Buffer.concat(parts).toString())));
        });
        up.on('error', () => res.writeHead(502).end());
        up.end(body);
      });
    }),
    new Set(),
    counted,
  );
}

type Receipt = { logs?: Array<{ topics: string[]; logIndex: string }> };

function malformReceipts(answerText: string): string {
  const parsed = JSON.parse(answerText) as { result?: unknown } | Array<{ result?: unknown }>;
  const malform = (receipt: Receipt | null | undefined): void => {
    const logs = receipt?.logs;
    if (!logs?.some((l) => l.topics[0] === TOPICS.userOperationEvent)) return;
    const last = logs[logs.length - 1]!;
    last.logIndex = `0x${(parseInt(last.logIndex, 16) + 1_000).toString(16)}`;
  };
  for (const answer of [parsed].flat()) {
    const result = answer.result;
    if (Array.isArray(result)) for (const r of result as Receipt[]) malform(r);
    else if (result && typeof result === 'object' && 'logs' in result && 'transactionHash' in result) malform(result as Receipt);
  }
  return JSON.stringify(parsed);
}

/** Lag samples of each chain: head − indexed block, read as each new head appears. */
export function sampleLags(db: Queryable, chains: SimChain[], everyMs = 50): { lags: number[][]; stop(): Promise<void> } {
  const lags = chains.map(() => [] as number[]);
  const seen = chains.map((c) => c.head());
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const [i, chain] of chains.entries()) {
        const head = chain.head();
        if (head === seen[i]) continue;
        seen[i] = head;
        lags[i]!.push(head - (await indexedBlock(db, chain.chainId)));
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    lags,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

export const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] ?? NaN;
};

/** The chain's store equals its simulator's truth from `fromBlock` to the block indexed now (INDEXER_TRANSFERS=ops). */
export async function expectChainMatchesTruth(
  db: Queryable,
  chain: SimChain,
  fromBlock: number,
  expectFn: (got: unknown, want: unknown, what: string) => void,
): Promise<number> {
  const to = await indexedBlock(db, chain.chainId);
  const truth = chain.truth(fromBlock, to);
  await expectMatchesTruth(db, { ...truth, plainTransfers: [] }, (got, want, what) => expectFn(got, want, `${chain.profile.name} ${what}`));
  return truth.userOps.length;
}

/** Writer locks held by the sessions of the indexer process `pid` (its sessions' application_name names it). */
export async function writerLocksOf(db: Queryable, pid: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and a.application_name like $1`,
    [`opscan-indexer/%-${pid}-%`],
  );
  return rows[0]!.n;
}
