/**
 * How far each network of the spec's map is from its EntryPoint v0.6 deployment to its height on
 * 2026-12-01, and what indexing that history takes at a measured rate and costs in RPC calls.
 *
 * No node is asked: heights are estimated from a reference block (a hard fork's or genesis's
 * number and time, as the chains publish them) and the block time of each era since, and the
 * deployment from the month the EntryPoint v0.6 (0x5FF137D4…2789) reached the network — public
 * knowledge of when ERC-4337 support launched there, not a block read from the chain (the research
 * notes mark Base's as unconfirmed). A deprecated testnet counts up to the month it stopped. The
 * figures are therefore within a few percent for the L1s and OP-stack chains (fixed block times)
 * and rougher where block times vary (Arbitrum, Polygon, BSC, Fantom): `basis` says which.
 */
import { readFileSync } from 'node:fs';

/**
 * Alchemy's compute units per call (alchemy.com/docs/reference/compute-unit-costs, as the research
 * notes quote it, 2025–2026): what a method costs against a plan's monthly budget. eth_call,
 * eth_chainId and eth_blockNumber are from the same table (26, 0, 10); a method not listed counts 20.
 * (eth_getBlockReceipts' 500 is throughput units, not billed units.)
 */
export const ALCHEMY_CU: Readonly<Record<string, number>> = {
  eth_getLogs: 60,
  eth_getBlockByNumber: 20,
  eth_getTransactionReceipt: 20,
  eth_getTransactionByHash: 20,
  eth_getBlockReceipts: 20,
  debug_traceTransaction: 40,
  eth_call: 26,
  eth_blockNumber: 10,
  eth_chainId: 0,
};

/** Compute units of calls counted by method. */
export const computeUnits = (byMethod: Record<string, number>): number =>
  Object.entries(byMethod).reduce((sum, [method, n]) => sum + n * (ALCHEMY_CU[method] ?? 20), 0);

type Bill = { ops: number | null; known: number | null };

/** 2026-12-01T00:00:00Z. */
export const TARGET_TIME = Date.UTC(2026, 11, 1) / 1000;

const at = (isoDate: string): number => Date.parse(`${isoDate}T00:00:00Z`) / 1000;

type Era = { from: string; blockTimeS: number };

type Estimate = {
  network: string;
  /** The measured profile whose rate and calls per block stand for it (the nearest in density). */
  profile: 'base' | 'polygon' | 'arbitrum' | 'mainnet';
  /** Month EntryPoint v0.6 was deployed (first of the month). */
  deployed: string;
  /** Block times since the deployment, oldest first. */
  eras: Era[];
  /** A deprecated testnet's last month. */
  stopped?: string;
  basis: string;
};

const ESTIMATES: Estimate[] = [
  {
    network: 'mainnet',
    profile: 'mainnet',
    deployed: '2023-04-01',
    eras: [{ from: '2023-04-01', blockTimeS: 12 }],
    basis: '12 s slots (a few % missed)',
  },
  {
    network: 'goerli',
    profile: 'arbitrum',
    deployed: '2023-04-01',
    eras: [{ from: '2023-04-01', blockTimeS: 12 }],
    stopped: '2024-04-01',
    basis: '12 s, deprecated',
  },
  { network: 'sepolia', profile: 'arbitrum', deployed: '2023-04-01', eras: [{ from: '2023-04-01', blockTimeS: 12 }], basis: '12 s' },
  {
    network: 'optimism',
    profile: 'base',
    deployed: '2023-06-06',
    eras: [{ from: '2023-06-06', blockTimeS: 2 }],
    basis: '2 s since Bedrock (legacy blocks of Apr–Jun 2023 left out)',
  },
  {
    network: 'optimism-goerli',
    profile: 'arbitrum',
    deployed: '2023-06-01',
    eras: [{ from: '2023-06-01', blockTimeS: 2 }],
    stopped: '2024-04-01',
    basis: '2 s, deprecated',
  },
  {
    network: 'base',
    profile: 'base',
    deployed: '2023-07-13',
    eras: [{ from: '2023-07-13', blockTimeS: 2 }],
    basis: '2 s since genesis 2023-06-15 (1686789347)',
  },
  {
    network: 'base-testnet',
    profile: 'arbitrum',
    deployed: '2023-04-01',
    eras: [{ from: '2023-04-01', blockTimeS: 2 }],
    stopped: '2024-02-01',
    basis: '2 s, deprecated',
  },
  { network: 'base-sepolia', profile: 'arbitrum', deployed: '2023-09-01', eras: [{ from: '2023-09-01', blockTimeS: 2 }], basis: '2 s' },
  {
    network: 'matic',
    profile: 'polygon',
    deployed: '2023-03-01',
    eras: [{ from: '2023-03-01', blockTimeS: 2.1 }],
    basis: '~2.1 s (varies)',
  },
  {
    network: 'mumbai',
    profile: 'arbitrum',
    deployed: '2023-03-01',
    eras: [{ from: '2023-03-01', blockTimeS: 2.1 }],
    stopped: '2024-04-01',
    basis: '~2.1 s, deprecated',
  },
  {
    network: 'arbitrum-one',
    profile: 'arbitrum',
    deployed: '2023-03-01',
    eras: [{ from: '2023-03-01', blockTimeS: 0.26 }],
    basis: '~0.26 s mean (blocks follow demand)',
  },
  {
    network: 'arbitrum-goerli',
    profile: 'arbitrum',
    deployed: '2023-03-01',
    eras: [{ from: '2023-03-01', blockTimeS: 0.3 }],
    stopped: '2024-01-01',
    basis: 'varies, deprecated',
  },
  {
    network: 'arbitrum-sepolia',
    profile: 'arbitrum',
    deployed: '2023-09-01',
    eras: [{ from: '2023-09-01', blockTimeS: 0.26 }],
    basis: '~0.26 s (varies)',
  },
  {
    network: 'bsc',
    profile: 'base',
    deployed: '2023-04-01',
    eras: [
      { from: '2023-04-01', blockTimeS: 3 },
      { from: '2025-04-29', blockTimeS: 1.5 },
      { from: '2025-06-30', blockTimeS: 0.75 },
    ],
    basis: '3 s, 1.5 s from Lorentz, 0.75 s from Maxwell',
  },
  {
    network: 'bnb-testnet',
    profile: 'arbitrum',
    deployed: '2023-04-01',
    eras: [
      { from: '2023-04-01', blockTimeS: 3 },
      { from: '2025-04-01', blockTimeS: 1.5 },
      { from: '2025-06-01', blockTimeS: 0.75 },
    ],
    basis: 'as BSC, forks a month earlier',
  },
  { network: 'gnosis', profile: 'arbitrum', deployed: '2023-04-01', eras: [{ from: '2023-04-01', blockTimeS: 5 }], basis: '5 s' },
  { network: 'fuse', profile: 'arbitrum', deployed: '2023-06-01', eras: [{ from: '2023-06-01', blockTimeS: 5 }], basis: '5 s' },
  { network: 'fantom', profile: 'arbitrum', deployed: '2023-05-01', eras: [{ from: '2023-05-01', blockTimeS: 1 }], basis: '~1 s (varies)' },
  {
    network: 'fantom-testnet',
    profile: 'arbitrum',
    deployed: '2023-05-01',
    eras: [{ from: '2023-05-01', blockTimeS: 1 }],
    basis: '~1 s (varies)',
  },
  {
    network: 'avalanche',
    profile: 'arbitrum',
    deployed: '2023-04-01',
    eras: [{ from: '2023-04-01', blockTimeS: 2 }],
    basis: '~2 s (varies)',
  },
  {
    network: 'avalanche-fuji',
    profile: 'arbitrum',
    deployed: '2023-04-01',
    eras: [{ from: '2023-04-01', blockTimeS: 2 }],
    basis: '~2 s (varies)',
  },
];

/** Blocks made between `deployed` and the target date (or the month a testnet stopped), era by era. */
export function blocksSinceDeployment(e: Estimate): number {
  const end = Math.min(TARGET_TIME, e.stopped ? at(e.stopped) : TARGET_TIME);
  let blocks = 0;
  e.eras.forEach((era, i) => {
    const from = Math.max(at(era.from), at(e.deployed));
    const to = Math.min(end, i + 1 < e.eras.length ? at(e.eras[i + 1]!.from) : end);
    if (to > from) blocks += (to - from) / era.blockTimeS;
  });
  return Math.round(blocks);
}

/** A history run's rate and calls, as bench/history.ts measured it. */
export type MeasuredRate = {
  profile: string;
  transfers: 'ops' | 'known';
  rttMs: number;
  blocksPerSecond: number;
  callsPerBlock: Record<string, number>;
};

/** At the head, calls per block by method (bench/chains.ts' head runs, read from bench/results.json); null where not measured. */
function headCallsPerBlock(): Record<string, Record<string, number>> {
  try {
    const results = JSON.parse(readFileSync(new URL('./results.json', import.meta.url), 'utf8')) as {
      parts?: { chains?: { result?: { head?: Record<string, { networks: Array<{ byMethodPerBlock: Record<string, number> }> }> } } };
    };
    const head = results.parts?.chains?.result?.head ?? {};
    return Object.fromEntries(Object.entries(head).map(([profile, run]) => [profile, run.networks[0]!.byMethodPerBlock]));
  } catch {
    return {};
  }
}

export type TimeToHead = {
  network: string;
  profile: string;
  deployed: string;
  stopped: string | null;
  basis: string;
  blocks: number;
  /** At the profile's measured rate through 50 ms RTT (the nearest measured RTT), INDEXER_TRANSFERS=ops and known. */
  hours: { ops: number | null; known: number | null };
  /** The whole history's calls by method (ops; eth_call left out, see perBlock), and Alchemy compute units (ops, known). */
  history: { callsByMethod: Record<string, number>; computeUnits: Bill };
  /** A day at the head (null: a stopped testnet). eth_call left out: the head runs' token metadata reads of a fresh start. */
  perDayAtHead: { calls: number; computeUnits: number } | null;
};

/**
 * A run's calls per block that scale with the blocks: eth_call (token metadata, once per token: a
 * short run's hundreds of new tokens, a long history's few thousand) and the subscription are left out.
 */
function perBlock(rate: MeasuredRate | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(rate?.callsPerBlock ?? {}).filter(([m]) => m !== 'eth_call' && m !== 'eth_subscribe'));
}

export function timeToHead(rates: MeasuredRate[]): TimeToHead[] {
  const heads = headCallsPerBlock();
  const rateOf = (profile: string, transfers: 'ops' | 'known') =>
    rates
      .filter((r) => r.profile === profile && r.transfers === transfers)
      .sort((a, b) => Math.abs(a.rttMs - 50) - Math.abs(b.rttMs - 50))[0];
  return ESTIMATES.map((e) => {
    const blocks = blocksSinceDeployment(e);
    const ops = rateOf(e.profile, 'ops');
    const known = rateOf(e.profile, 'known');
    const hours = (r: MeasuredRate | undefined) => (r ? Math.round((blocks / r.blocksPerSecond / 3600) * 10) / 10 : null);
    const callsByMethod = Object.fromEntries(Object.entries(perBlock(ops)).map(([m, n]) => [m, Math.round(n * blocks)]));
    const cu = (r: MeasuredRate | undefined) => (r ? Math.round(computeUnits(perBlock(r)) * blocks) : null);
    const head = heads[e.profile];
    const lastEra = e.eras.at(-1)!;
    const blocksPerDay = 86_400 / lastEra.blockTimeS;
    const atHead = head ? Object.fromEntries(Object.entries(head).filter(([m]) => m !== 'eth_call')) : null;
    return {
      network: e.network,
      profile: e.profile,
      deployed: e.deployed,
      stopped: e.stopped ?? null,
      basis: e.basis,
      blocks,
      hours: { ops: hours(ops), known: hours(known) },
      history: { callsByMethod, computeUnits: { ops: cu(ops), known: cu(known) } },
      perDayAtHead:
        e.stopped || !atHead
          ? null
          : {
              calls: Math.round(Object.values(atHead).reduce((s, n) => s + n, 0) * blocksPerDay),
              computeUnits: Math.round(computeUnits(atHead) * blocksPerDay),
            },
    };
  });
}
