/**
 * `npm run bench -- peer`: opscan's backfill against a peer, a Subsquid EVM processor
 * (bench/peer/processor.mjs: RPC ingestion, a PostgreSQL store of the same ops, accounts and days),
 * and the bare fetch of bench/indexer.ts, on the same devnet chain, on loopback and through a proxy
 * adding FAR_DELAY_MS to every request. Each repeat runs every side once on each path, interleaved,
 * so that a noisy moment of a shared machine hits all of them alike; figures are medians, ratios the
 * medians of the per-repeat ratios, and beside each wall time the CPU seconds of each process (the
 * indexer's or the peer's, the whole PostgreSQL server's, the node's; the fetcher's for the bare fetch).
 *
 * The peer's dependencies stay out of the product's install: bench/peer has its own package.json and
 * package-lock.json, installed here on first use (`npm ci --prefix bench/peer`). PostgreSQL only.
 *
 * Settings (environment):
 *  - BENCH_PEER_OPS (default 10000), BENCH_PEER_REPEATS (default 3);
 *  - BENCH_PEER_FAR=0: loopback only (an A/B in half the time);
 *  - BENCH_PEER_BASELINE=<commit>: opscan at that commit runs beside this tree's, interleaved (an A/B
 *    of a change: `baseline*` figures, and `toBaseline` ratios of wall and CPU time);
 *  - BENCH_PEER_VARIANT_ENV="NAME=value,…;NAME=value": one more opscan run per `;`-separated entry,
 *    with those settings (an A/B of a setting: `variants`, and `loopbackVariantNToDefault` ratios);
 *  - BENCH_PEER_PROFILE=1: one more loopback backfill under `--cpu-prof`, its threads' profiles
 *    summarized by kind of work (bench/cpuProfile.ts) beside the PostgreSQL server's CPU; the
 *    profiles are kept in bench/out/profile-<date>.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startDevnet } from '../devnet/index.js';
import { DEFAULT_TUNING } from '../indexer/index.js';
import { summarizeCpuProfiles, type ProfileSummary } from './cpuProfile.js';
import {
  backfill,
  bareFetch,
  emptyDatabase,
  generateOps,
  median,
  round,
  rssMb,
  since,
  startLatencyProxy,
  type BackfillRun,
  type BareFetchRun,
  type ProxyTraffic,
} from './indexer.js';
import { parentPid, postgresCpuSeconds, processCpuSeconds } from './processCpu.js';
import { ROOT, buildProcfile, type ProcfileBuild } from './procfile.js';

export type PeerBenchOptions = { databaseUrl?: string; ops: number; repeats: number };

/** Added to every request on the far path: a hosted node across an ocean. */
const FAR_DELAY_MS = 200;
const PEER_DIR = join(ROOT, 'bench/peer');

type PeerRun = {
  seconds: number;
  userOps: number;
  peakRssMb: number | null;
  /** From its "peer started" line (store connected) to its batch at the head. */
  cpuSeconds: { peer: number | null; postgres: number | null; node: number | null };
};

function installPeer(): void {
  if (existsSync(join(PEER_DIR, 'node_modules/@subsquid/evm-processor'))) return;
  console.log('bench peer: installing bench/peer (npm ci --prefix bench/peer)');
  execFileSync('npm', ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
}

/** The Subsquid processor in its own process on a fresh database, until its batch at `head` is committed. */
async function peer(
  rpcUrl: string,
  databaseUrl: string,
  { head, entryPoints, nodePid }: { head: number; entryPoints: string[]; nodePid: number },
): Promise<PeerRun> {
  const database = await emptyDatabase(databaseUrl, `opscan_bench_peer_${process.pid}`);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const postmaster = parentPid((await admin.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
    const env = { ...process.env, RPC_URL: rpcUrl, DATABASE_URL: database.url, ENTRY_POINTS: entryPoints.join(','), HEAD: String(head) };
    const child = spawn(process.execPath, [join(PEER_DIR, 'processor.mjs')], { env, cwd: PEER_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
    const cpuNow = () => ({
      peer: processCpuSeconds(child.pid!),
      postgres: postmaster === null ? null : postgresCpuSeconds(postmaster),
      node: processCpuSeconds(nodePid),
    });
    const run = await new Promise<Omit<PeerRun, 'userOps'>>((resolve, reject) => {
      let startedAt = 0;
      let cpuAtStart = cpuNow();
      let buffered = '';
      child.once('exit', (code) => reject(new Error(`the peer exited (${code}) before reaching block ${head}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          if (line.includes('"peer started"')) {
            startedAt = performance.now();
            cpuAtStart = cpuNow();
          } else if (line.includes('"peer at head"')) {
            // Read before the process goes: its CPU and its high-water mark.
            const cpu = cpuNow();
            resolve({
              seconds: (performance.now() - startedAt) / 1000,
              peakRssMb: rssMb(child.pid!),
              cpuSeconds: {
                peer: since(cpuAtStart.peer, cpu.peer),
                postgres: since(cpuAtStart.postgres, cpu.postgres),
                node: since(cpuAtStart.node, cpu.node),
              },
            });
          }
        }
      });
    }).finally(() => {
      child.removeAllListeners('exit');
      child.kill('SIGKILL');
    });
    await new Promise((resolve) => (child.exitCode === null && child.signalCode === null ? child.once('exit', resolve) : resolve(null)));
    const userOps = Number((await admin.query<{ n: string }>('select count(*) as n from user_op')).rows[0]!.n);
    return { ...run, userOps };
  } finally {
    await admin.end();
    await database.drop();
  }
}

/** `NAME=value,NAME=value` → a record. */
function settingsOf(text: string | undefined): Record<string, string> | null {
  if (!text) return null;
  return Object.fromEntries(text.split(',').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

type Path = 'loopback' | 'far';
type Side = {
  bare: BareFetchRun[];
  opscan: BackfillRun[];
  baseline: BackfillRun[];
  /** Per variant (BENCH_PEER_VARIANT_ENV's entries, in order). */
  variants: BackfillRun[][];
  peer: PeerRun[];
  traffic: { opscan: ProxyTraffic[]; peer: ProxyTraffic[]; bare: ProxyTraffic[] };
};

export async function runPeerBench(options: PeerBenchOptions): Promise<Record<string, unknown>> {
  if (!options.databaseUrl) throw new Error('bench peer: PostgreSQL only (set BENCH_DATABASE_URL or DATABASE_URL)');
  const databaseUrl = options.databaseUrl;
  installPeer();
  const baselineCommit = process.env.BENCH_PEER_BASELINE || undefined;
  const variants = (process.env.BENCH_PEER_VARIANT_ENV ?? '').split(';').filter(Boolean);
  const variantEnvs = variants.map((v) => settingsOf(v)!);
  const paths: Path[] = process.env.BENCH_PEER_FAR === '0' ? ['loopback'] : ['loopback', 'far'];
  const builds: ProcfileBuild[] = [];
  const opscan = buildProcfile();
  builds.push(opscan);
  const baseline = baselineCommit ? buildProcfile(baselineCommit) : null;
  if (baseline) builds.push(baseline);
  const devnet = await startDevnet();
  const far = await startLatencyProxy(devnet.rpcUrl, FAR_DELAY_MS);
  try {
    await generateOps(devnet, options.ops);
    const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
    const entryPoints = Object.values(devnet.truth.entryPoints);
    const ops = devnet.truth.userOps.length;
    const chain = { entryPoints, head, nodePid: devnet.pid };
    const known = { head, transfers: 'known' as const, nodePid: devnet.pid };
    const runs: Record<Path, Side> = {
      loopback: {
        bare: [],
        opscan: [],
        baseline: [],
        variants: variants.map(() => []),
        peer: [],
        traffic: { opscan: [], peer: [], bare: [] },
      },
      far: { bare: [], opscan: [], baseline: [], variants: variants.map(() => []), peer: [], traffic: { opscan: [], peer: [], bare: [] } },
    };
    for (let i = 0; i < options.repeats; i++) {
      for (const path of paths) {
        const url = path === 'far' ? far.url : devnet.rpcUrl;
        const side = runs[path];
        // The order turns each repeat, so that no side always runs first after a pause or last.
        const steps: Array<() => Promise<void>> = [
          async () => {
            far.reset();
            side.bare.push(await bareFetch(url, chain, DEFAULT_TUNING));
            if (path === 'far') side.traffic.bare.push(far.traffic());
          },
          async () => {
            far.reset();
            side.opscan.push(await backfill(opscan.args('indexer'), url, databaseUrl, known));
            if (path === 'far') side.traffic.opscan.push(far.traffic());
          },
          async () => {
            far.reset();
            side.peer.push(await peer(url, databaseUrl, chain));
            if (path === 'far') side.traffic.peer.push(far.traffic());
          },
          ...(baseline ? [async () => void side.baseline.push(await backfill(baseline.args('indexer'), url, databaseUrl, known))] : []),
          ...variantEnvs.map(
            (env, v) => async () =>
              void side.variants[v]!.push(await backfill(opscan.args('indexer'), url, databaseUrl, { ...known, env })),
          ),
        ];
        for (let s = 0; s < steps.length; s++) {
          console.log(`bench peer: repeat ${i + 1}/${options.repeats}, ${path}, step ${s + 1}/${steps.length}`);
          await steps[(s + i) % steps.length]!();
        }
      }
    }
    for (const path of paths)
      for (const run of [...runs[path].opscan, ...runs[path].baseline, ...runs[path].variants.flat(), ...runs[path].peer])
        if (run.userOps !== ops) throw new Error(`${path}: stored ${run.userOps} of ${ops} ops`);

    let profile: { dir: string; seconds: number; postgresCpuSeconds: number | null; threads: ProfileSummary } | null = null;
    if (process.env.BENCH_PEER_PROFILE === '1') {
      const dir = join(ROOT, `bench/out/profile-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      mkdirSync(dir, { recursive: true });
      const run = await backfill(opscan.args('indexer'), devnet.rpcUrl, databaseUrl, { ...known, cpuProfileDir: dir });
      // The profiles are written as the threads exit (after SIGTERM).
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      profile = {
        dir,
        seconds: round(run.seconds),
        postgresCpuSeconds: run.cpuSeconds.postgres,
        threads: summarizeCpuProfiles(dir, run.monotonicMicros),
      };
    }

    const seconds = (list: Array<{ seconds: number }>) => round(median(list.map((r) => r.seconds)));
    const cpu = <R extends { cpuSeconds: Record<string, number | null> }>(list: R[]) => {
      const keys = Object.keys(list[0]?.cpuSeconds ?? {});
      return Object.fromEntries(
        keys.map((k) => {
          const known = list.map((r) => r.cpuSeconds[k]).filter((v): v is number => v !== null && v !== undefined);
          return [k, known.length === list.length ? round(median(known)) : null];
        }),
      );
    };
    const ratio = (a: Array<{ seconds: number }>, b: Array<{ seconds: number }>) =>
      a.length === 0 || b.length === 0 ? null : round(median(a.map((r, i) => r.seconds / b[i]!.seconds)));
    const cpuRatio = (a: BackfillRun[], b: BackfillRun[]) =>
      a.length === 0 || b.length === 0
        ? null
        : round(median(a.map((r, i) => (r.cpuSeconds.indexer ?? NaN) / (b[i]!.cpuSeconds.indexer ?? NaN))));
    const trafficOf = (list: ProxyTraffic[]) =>
      list.length === 0
        ? null
        : {
            requests: median(list.map((t) => t.requests)),
            maxInFlight: median(list.map((t) => t.maxInFlight)),
            busySeconds: round(median(list.map((t) => t.busySeconds))),
            criticalRoundTrips: Math.round(median(list.map((t) => t.busySeconds)) / (FAR_DELAY_MS / 1000)),
            calls: list[0]!.calls,
          };
    const figures = (path: Path) => {
      const side = runs[path];
      return {
        bareFetchSeconds: seconds(side.bare),
        opscanSeconds: seconds(side.opscan),
        peerSeconds: seconds(side.peer),
        opscanToPeer: ratio(side.opscan, side.peer),
        opscanToBareFetch: ratio(side.opscan, side.bare),
        peerToBareFetch: ratio(side.peer, side.bare),
        opscanCpuSeconds: cpu(side.opscan),
        peerCpuSeconds: cpu(side.peer),
        bareFetchCpuSeconds: cpu(side.bare),
        opscanPeakRssMb: Math.max(...side.opscan.map((r) => r.peakRssMb ?? 0)),
        peerPeakRssMb: Math.max(...side.peer.map((r) => r.peakRssMb ?? 0)),
        ...(baseline
          ? {
              baselineSeconds: seconds(side.baseline),
              baselineCpuSeconds: cpu(side.baseline),
              toBaseline: ratio(side.opscan, side.baseline),
              cpuToBaseline: cpuRatio(side.opscan, side.baseline),
            }
          : {}),
        variants: Object.fromEntries(
          variants.map((name, v) => [
            name,
            {
              seconds: seconds(side.variants[v]!),
              cpuSeconds: cpu(side.variants[v]!),
              toDefault: ratio(side.variants[v]!, side.opscan),
              cpuToDefault: cpuRatio(side.variants[v]!, side.opscan),
              peakRssMb: Math.max(...side.variants[v]!.map((r) => r.peakRssMb ?? 0)),
            },
          ]),
        ),
      };
    };
    const loopback = figures('loopback');
    const farFigures = paths.includes('far') ? figures('far') : null;
    const summary = {
      ops,
      loopbackBareFetchSeconds: loopback.bareFetchSeconds,
      loopbackOpscanSeconds: loopback.opscanSeconds,
      loopbackPeerSeconds: loopback.peerSeconds,
      loopbackOpscanToPeer: loopback.opscanToPeer,
      loopbackOpscanToBareFetch: loopback.opscanToBareFetch,
      loopbackOpscanCpu: loopback.opscanCpuSeconds.indexer,
      loopbackPeerCpu: loopback.peerCpuSeconds.peer,
      loopbackOpscanPostgresCpu: loopback.opscanCpuSeconds.postgres,
      loopbackPeerPostgresCpu: loopback.peerCpuSeconds.postgres,
      opscanPeakRssMb: loopback.opscanPeakRssMb,
      ...(farFigures
        ? {
            farBareFetchSeconds: farFigures.bareFetchSeconds,
            farOpscanSeconds: farFigures.opscanSeconds,
            farPeerSeconds: farFigures.peerSeconds,
            farOpscanToPeer: farFigures.opscanToPeer,
            farOpscanToLoopback: round(median(runs.far.opscan.map((r, i) => r.seconds / runs.loopback.opscan[i]!.seconds))),
          }
        : {}),
      ...(baseline ? { loopbackToBaseline: loopback.toBaseline, loopbackCpuToBaseline: loopback.cpuToBaseline } : {}),
      ...Object.fromEntries(
        variants.flatMap((name, v) => [
          [`loopbackVariant${v + 1}ToDefault`, loopback.variants[name]!.toDefault],
          [`loopbackVariant${v + 1}CpuToDefault`, loopback.variants[name]!.cpuToDefault],
        ]),
      ),
    };
    return {
      summary,
      loopback,
      far: farFigures,
      farDelayMs: FAR_DELAY_MS,
      farTraffic: farFigures
        ? {
            opscan: trafficOf(runs.far.traffic.opscan),
            peer: trafficOf(runs.far.traffic.peer),
            bareFetch: trafficOf(runs.far.traffic.bare),
          }
        : null,
      profile,
      baselineCommit: baselineCommit ?? null,
      variants,
      repeats: options.repeats,
      bundles: devnet.truth.bundles.length,
      blocks: head + 1,
      runs: Object.fromEntries(
        paths.map((path) => [
          path,
          {
            bareFetchSeconds: runs[path].bare.map((r) => round(r.seconds)),
            opscanSeconds: runs[path].opscan.map((r) => round(r.seconds)),
            opscanCpuSeconds: runs[path].opscan.map((r) => r.cpuSeconds),
            opscanPeakRssMb: runs[path].opscan.map((r) => r.peakRssMb),
            peerSeconds: runs[path].peer.map((r) => round(r.seconds)),
            peerCpuSeconds: runs[path].peer.map((r) => r.cpuSeconds),
            baselineSeconds: runs[path].baseline.map((r) => round(r.seconds)),
            baselineCpuSeconds: runs[path].baseline.map((r) => r.cpuSeconds),
            variantSeconds: runs[path].variants.map((list) => list.map((r) => round(r.seconds))),
            variantCpuSeconds: runs[path].variants.map((list) => list.map((r) => r.cpuSeconds)),
            variantPeakRssMb: runs[path].variants.map((list) => list.map((r) => r.peakRssMb)),
          },
        ]),
      ),
    };
  } finally {
    await far.stop();
    await devnet.stop();
    for (const build of builds) build.cleanup();
  }
}
