/**
 * The indexer's Prometheus metrics (prom-client's default registry, served at /metrics). Where
 * the indexer stands (head, indexed block, lag) is read from `indexer_state` at scrape time, so
 * it is the same truth the API serves; the rest is counted as the work happens.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Queryable } from '../shared/db/client.js';
import * as indexerState from '../shared/db/tables/indexerState.js';

/** ops/s is the rate over this window (a backfill's batches arrive in bursts). */
const RATE_WINDOW_MS = 30_000;

let watched: { db: Queryable; networks: Array<{ name: string; chainId: number }> } | null = null;

type Position = { head: number; indexed: number; writeFailure: indexerState.WriteFailure | null };

/** One indexer_state read per scrape, shared by the three gauges that collect from it. */
let positions: Promise<Map<string, Position>> | null = null;
function readPositions(): Promise<Map<string, Position>> {
  if (!watched) return Promise.resolve(new Map<string, Position>());
  const { db, networks } = watched;
  positions ??= indexerState
    .listByChainIds(
      db,
      networks.map((n) => n.chainId),
    )
    .then(
      (rows) =>
        new Map<string, Position>(
          rows.map((r) => [
            networks.find((n) => n.chainId === r.chainId)?.name ?? r.network,
            { head: r.headBlock, indexed: r.indexedBlock, writeFailure: r.writeFailure },
          ]),
        ),
    )
    .finally(() => setTimeout(() => (positions = null), 100));
  return positions;
}

/** A gauge of each network's position; `value` null: no sample for that network. */
function positionGauge(name: string, help: string, value: (p: Position) => number | null): Gauge<'network'> {
  return new Gauge({
    name,
    help,
    labelNames: ['network'],
    async collect() {
      this.reset();
      try {
        for (const [network, p] of await readPositions()) {
          const v = value(p);
          if (v !== null) this.set({ network }, v);
        }
      } catch {
        // The database is unreachable: no sample (readyz says why).
      }
    },
  });
}

positionGauge('opscan_indexer_head_block', 'Chain head seen by the indexer.', (p) => p.head);
positionGauge('opscan_indexer_indexed_block', 'Last block indexed (rows, aggregates and cursor committed).', (p) => p.indexed);
positionGauge('opscan_indexer_lag_blocks', 'Blocks between the head and the last indexed block.', (p) => Math.max(0, p.head - p.indexed));
positionGauge(
  'opscan_indexer_write_failure_attempts',
  'Attempts in a row that failed to write the blocks after the last indexed one (0 while batches commit; the reason is in getNetworkStatus).',
  (p) => p.writeFailure?.attempts ?? 0,
);
positionGauge(
  'opscan_indexer_write_failure_block',
  'The first block the indexer fails to write; no sample while batches commit.',
  (p) => p.writeFailure?.fromBlock ?? null,
);

const userOps = new Counter({
  name: 'opscan_indexer_user_ops_total',
  help: 'User operations written by this process.',
  labelNames: ['network'],
});

const recentOps = new Map<string, Array<{ at: number; ops: number }>>();
new Gauge({
  name: 'opscan_indexer_user_ops_per_second',
  help: `User operations written per second over the last ${RATE_WINDOW_MS / 1000} s.`,
  labelNames: ['network'],
  collect() {
    this.reset();
    const since = Date.now() - RATE_WINDOW_MS;
    for (const [network, entries] of recentOps) {
      const kept = entries.filter((e) => e.at >= since);
      recentOps.set(network, kept);
      this.set({ network }, kept.reduce((sum, e) => sum + e.ops, 0) / (RATE_WINDOW_MS / 1000));
    }
  },
});

const batchWrite = new Histogram({
  name: 'opscan_indexer_batch_write_seconds',
  help: 'Time to write one batch (rows, aggregates, outbox and cursor in one transaction).',
  labelNames: ['network'],
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

const rpcCalls = new Counter({
  name: 'opscan_indexer_rpc_calls_total',
  help: 'JSON-RPC calls sent (batch members count one each).',
  labelNames: ['network', 'method'],
});
const rpcErrors = new Counter({
  name: 'opscan_indexer_rpc_errors_total',
  help: 'JSON-RPC calls answered with an error or lost with their HTTP request (most are retried).',
  labelNames: ['network', 'method'],
});
const endpointWrongChain = new Gauge({
  name: 'opscan_indexer_rpc_endpoint_wrong_chain_id',
  help: "The chain id a URL of the network's RPC list serves instead of the network's (the URL is left out while it does); no sample for URLs on the right chain. endpoint: its position in the list and its host.",
  labelNames: ['network', 'endpoint'],
});
const endpointInUse = new Gauge({
  name: 'opscan_indexer_rpc_endpoint_in_use',
  help: "Position (1 = first) in the network's RPC list of the URL the indexer sends its calls to.",
  labelNames: ['network'],
});
const undecodedCalls = new Counter({
  name: 'opscan_indexer_undecoded_call_data_total',
  help: 'User operations whose callData names no account method opscan knows (kept with raw callData and no calls).',
  labelNames: ['network'],
});
const reorgs = new Counter({
  name: 'opscan_indexer_reorgs_total',
  help: 'Reorgs repaired (rolled back to the common ancestor).',
  labelNames: ['network'],
});

/** What made the indexer look at a network's head: a newHeads announcement, or its poll timer. */
export type HeadSource = 'subscription' | 'poll';
const heads = new Counter({
  name: 'opscan_indexer_heads_total',
  help: 'New heads learned, by source: subscription = newHeads announcements received over the WebSocket; poll = polls that found blocks to index (with a live subscription, announcements it missed).',
  labelNames: ['network', 'source'],
});

/** What the indexer's code counts as it works (in a network's worker, forwarded to the process's registry). */
const recorders = {
  /** Ops written whose callData opscan could not read as account calls (an unknown account layout). */
  undecodedCallData(network: string, ops: number): void {
    if (ops > 0) undecodedCalls.inc({ network }, ops);
  },
  batchWritten(network: string, ops: number, writeSeconds?: number): void {
    userOps.inc({ network }, ops);
    const entries = recentOps.get(network) ?? [];
    entries.push({ at: Date.now(), ops });
    recentOps.set(network, entries.length > 10_000 ? entries.slice(-5_000) : entries);
    if (writeSeconds !== undefined) batchWrite.observe({ network }, writeSeconds);
  },
  rpcCalled(network: string, method: string): void {
    rpcCalls.inc({ network, method });
  },
  rpcFailed(network: string, method: string): void {
    rpcErrors.inc({ network, method });
  },
  /** `served`: the chain id an endpoint serves instead of the network's, or null once it serves the right one. */
  rpcEndpointChain(network: string, endpoint: string, served: number | null): void {
    if (served === null) endpointWrongChain.remove({ network, endpoint });
    else endpointWrongChain.set({ network, endpoint }, served);
  },
  rpcEndpointInUse(network: string, position: number): void {
    endpointInUse.set({ network }, position);
  },
  headFound(network: string, source: HeadSource): void {
    heads.inc({ network, source });
  },
  reorgRepaired(network: string): void {
    reorgs.inc({ network });
  },
};

type Recorders = typeof recorders;
/** One recorder call, as a network's worker posts it to its supervisor (indexer/supervisor.ts). */
export type MetricsEvent = { [K in keyof Recorders]: { metric: K; args: Parameters<Recorders[K]> } }[keyof Recorders];

/** Set in a network's worker: recorder calls go to the supervising thread instead of this thread's registry. */
let forward: ((event: MetricsEvent) => void) | null = null;

const forwarding = Object.fromEntries(
  Object.entries(recorders).map(([metric, record]) => [
    metric,
    (...args: unknown[]) => (forward ? forward({ metric, args } as MetricsEvent) : (record as (...a: unknown[]) => void)(...args)),
  ]),
) as Recorders;

export const indexerMetrics = {
  /** Reads head, indexed block and lag of these networks from `db` at each scrape. */
  watch(db: Queryable, networks: Array<{ name: string; chainId: number }>): void {
    watched = { db, networks };
    // A read of what was watched before is not an answer about these networks.
    positions = null;
  },
  /** In a network's worker: sends every count to `post` (its supervisor records it with `record`). */
  forwardTo(post: (event: MetricsEvent) => void): void {
    forward = post;
  },
  /** Records a count a worker forwarded. */
  record(event: MetricsEvent): void {
    (recorders[event.metric] as (...a: unknown[]) => void)(...event.args);
  },
  ...forwarding,
};
