/**
 * The soak: a whole opscan deployment run for an hour (or `--minutes N`) under faults drawn at
 * random, then judged on its data, its webhooks and its processes' memory.
 *
 *   - the 21 networks of the spec's map, each on a thin chain simulator producing blocks with user
 *     ops, plus the anvil devnet (the simulators have no reorgs: the devnet's reorgs are real ones);
 *     every network's RPC goes through a fault-injecting proxy;
 *   - the Procfile's processes, built and run by its command lines (bench/procfile.ts), as OS
 *     processes on one PostgreSQL cluster of the suite's own: two indexers sharing the networks, web and dispatcher, each restarted as a platform would when it
 *     exits; a redis-server of the suite's own;
 *   - webhooks of every filter type (ADDRESS, FACTORY, BUNDLER, PAYMASTER on the devnet; BUNDLER and
 *     PAYMASTER on a simulated network) to a local receiver recording each delivery's webhook-id;
 *   - faults one after another, a seeded random gap apart, each kind in turn of a seeded shuffled
 *     bag: RPC faults on one network (HTTP 5xx and 429, JSON-RPC errors, truncated bodies, dropped
 *     sockets, null for just-announced blocks), a devnet reorg of depth 1–12, SIGKILL of one process
 *     (in the run's first half only, so the second half's memory is each process's own), a simulated
 *     network stalled then jumping, the PostgreSQL cluster paused (SIGSTOP), restarted or crashed,
 *     and the Redis server killed and started again. Each fault's recovery time is measured: until
 *     every network it touched is indexed up to where its head was when the fault ended.
 *
 * After a drain (heads frozen, every network indexed to its head) it asserts that each network's
 * store equals its simulator's truth, that every webhook event was delivered at least once and
 * under exactly one webhook-id, and that no process printed MaxListenersExceededWarning or an
 * unhandled rejection. It reports (does not assert) each process's RSS growth per hour (a linear fit
 * of /proc samples after a warm-up) and the load average.
 *
 *   npm run test:soak                        the hour
 *   npm run test:soak -- --minutes 10        another length
 *   npm run test:soak -- --reduced           CI's run (about four minutes)
 *   npm run test:soak -- --seed 1234         a given seed (printed at the start of every run)
 */
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import { generate, reorg, startContinuous, startDevnet, type ContinuousTraffic, type Devnet } from '../../devnet/index.js';
import { Random } from '../../devnet/random.js';
import { buildProcfile, type ProcfileBuild } from '../../bench/procfile.js';
import type { SimChain } from '../../simchain/server.js';
import { createDb, type Db } from '../../shared/db/client.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import { NETWORKS, envSuffix, findNetworkByChainId } from '../../shared/networks.js';
import { createTestKey } from '../helpers/app.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { createMigratedDatabaseOn, startPostgresServer, type PostgresServer } from '../helpers/pgServer.js';
import { indexedBlock } from '../indexer/support.js';
import { expectChainMatchesTruth, startThinChains } from '../indexer/support/networksUnderFault.js';
import { expectMatchesTruth, readStoredTruth } from '../indexer/storedTruth.js';
import { expectedEvents, mostCommon, type EventTruth } from '../webhooks/support/expectedEvents.js';
import { startReceiver, type Receiver } from '../webhooks/support/receiver.js';
import { httpStatus } from '../faults/support/productOnDatabase.js';
import { freePort, startChild, waitUntil, type Child } from '../faults/support/childProcess.js';
import { startRedisServer, type RedisServer } from '../faults/support/redisServer.js';

const argument = (name: string): string | undefined => {
  const at = process.argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (at < 0) return undefined;
  const arg = process.argv[at]!;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : process.argv[at + 1];
};
const REDUCED = process.argv.includes('--reduced') || process.env.SOAK_REDUCED === '1';
const MINUTES = REDUCED ? 0 : Number(argument('--minutes') ?? process.env.SOAK_MINUTES ?? 60);
const SEED = Number(argument('--seed') ?? process.env.SOAK_SEED ?? Math.floor(Math.random() * 1_000_000));
if (!Number.isFinite(MINUTES) || MINUTES < 0) throw new Error(`--minutes: a positive number expected, got ${argument('--minutes')}`);
if (!Number.isInteger(SEED)) throw new Error(`--seed: an integer expected, got ${argument('--seed')}`);

/** Where each process's output is written (`<slot>.log`, appended across restarts). */
const LOG_DIR = process.env.SOAK_LOG_DIR ?? `/tmp/opscan-soak-${SEED}`;

/** The run's length of each thing, by the run's kind. */
const PLAN = REDUCED
  ? { gapMs: [3_000, 6_000], rpcMs: 15_000, stallMs: 12_000, outageMs: 5_000, sampleMs: 10_000, warmUpMs: 40_000 }
  : { gapMs: [20_000, 60_000], rpcMs: 60_000, stallMs: 60_000, outageMs: 10_000, sampleMs: 30_000, warmUpMs: 5 * 60_000 };
const BLOCK_TIME_MS = 2_000;
/** How long a fault's recovery is waited for before it is recorded as not recovered (the run goes on). */
const RECOVERY_BOUND_MS = 240_000;
const REORG_DEPTHS = [1, 2, 3, 5, 8, 12];
const SIMULATED = NETWORKS.filter((n) => n.inSpecMap).map((n) => n.name);
/** The simulated network whose webhooks are checked (its finality depth delays them: 30 blocks). */
const HOOKED_NETWORK = 'base';
/** What a process must not print, whatever else happens. */
const FORBIDDEN = /MaxListenersExceededWarning|unhandled ?rejection/i;

type FaultKind = 'rpc' | 'reorg' | 'kill' | 'stall' | 'postgres' | 'redis';
const FAULT_KINDS: FaultKind[] = ['rpc', 'reorg', 'kill', 'stall', 'postgres', 'redis'];
/** `behind`: what had not caught up when the recovery's bound ran out. */
type FaultRow = { at: number; kind: FaultKind; what: string; lastedMs: number; recoveryMs: number | null; behind: string | null };
const SLOTS = ['web', 'indexer-1', 'indexer-2', 'dispatcher'] as const;
type ProcessSlot = (typeof SLOTS)[number];
type Sample = { at: number; pid: number; rssMb: number };
type Hook = { label: string; network: string; chainId: number; filter: string; identifier: string; id: string };

const chainIdOf = (network: string): number => NETWORKS.find((n) => n.name === network)!.chainId;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** RSS of a process in MB from /proc, or null when it is gone. */
function rssMb(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

describe(`the soak: a whole deployment under random faults${REDUCED ? ' (reduced run)' : ` (${MINUTES} min)`}`, function () {
  this.timeout((MINUTES + 40) * 60_000);
  const faults: FaultRow[] = [];
  const samples = new Map<ProcessSlot, Sample[]>();
  const loads: number[] = [];
  const summary: string[] = [];
  const printed: string[] = [];
  const exits: string[] = [];
  let build: ProcfileBuild;
  let pg: PostgresServer;
  let redis: RedisServer;
  let db: Db;
  let devnet: Devnet;
  let traffic: ContinuousTraffic | undefined;
  let chains: SimChain[] = [];
  const proxies = new Map<string, FaultProxy>();
  let receiver: Receiver;
  const children = new Map<ProcessSlot, Child>();
  /** Children stopped on purpose (a fault's SIGKILL, the end): their exit is not a crash. */
  const stopping = new Set<Child>();
  let restarting = true;

  before(async function () {
    mkdirSync(LOG_DIR, { recursive: true });
    console.log(`\nprocess logs in ${LOG_DIR}`);
    console.log(`\nsoak seed ${SEED} (rerun with --seed ${SEED}); ${REDUCED ? 'one fault of each kind' : `${MINUTES} min of faults`}`);
    build = buildProcfile();
    pg = await startPostgresServer();
    redis = await startRedisServer();
    devnet = await startDevnet();
    await generate(devnet, { ops: 40, days: 1, seed: SEED, layout: { maxBundlesPerBlock: 2, maxOpsPerBundle: 4 } });
    chains = await startThinChains(SIMULATED, BLOCK_TIME_MS);
    receiver = await startReceiver();
  });

  after(async () => {
    restarting = false;
    await traffic?.stop();
    for (const child of children.values()) stopping.add(child);
    await Promise.all([...children.values()].map((c) => c.kill('SIGKILL')));
    await Promise.all(chains.map((c) => c.close()));
    await Promise.all([...proxies.values()].map((p) => p.stop()));
    await receiver?.close();
    await db?.close();
    await devnet?.stop();
    await redis?.stop();
    await pg?.stop();
    build?.cleanup();
    printSummary();
  });

  it('keeps every network equal to its truth and every webhook delivered once per id, reporting memory and recoveries', async () => {
    const databaseUrl = await createMigratedDatabaseOn(pg);
    db = await createDb({ databaseUrl, max: 3 });
    const lifetimeMs = (MINUTES + 40) * 60_000;
    for (const chain of chains)
      proxies.set(chain.profile.name, await startFaultProxy({ upstream: chain.url, faultRate: 0, lifetimeMs, seed: SEED + chain.chainId }));
    proxies.set('devnet', await startFaultProxy({ upstream: devnet.rpcUrl, faultRate: 0, lifetimeMs, seed: SEED }));
    const starts = new Map(chains.map((c) => [c.profile.name, c.head()]));

    const [webPort, ...metricsPorts] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const webUrl = `http://127.0.0.1:${webPort}`;
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `opscan_soak_${SEED}:`,
      NETWORKS: [...SIMULATED, 'devnet'].join(','),
      INDEXER_TRANSFERS: 'ops',
      INDEXER_POLL_INTERVAL_MS: '1000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      RPC_URL_DEVNET: proxies.get('devnet')!.url,
      START_BLOCK_DEVNET: '0',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
    };
    for (const chain of chains) {
      env[`RPC_URL_${envSuffix(chain.profile.name)}`] = proxies.get(chain.profile.name)!.url;
      env[`START_BLOCK_${envSuffix(chain.profile.name)}`] = String(starts.get(chain.profile.name));
    }
    // The Procfile's command lines (the indexer with its heap limit) on this tree's build.
    const programs: Record<ProcessSlot, [string[], Record<string, string>, string]> = {
      web: [build.args('web'), { PORT: String(webPort) }, `${webUrl}/readyz`],
      'indexer-1': [build.args('indexer'), { METRICS_PORT: String(metricsPorts[0]) }, `http://127.0.0.1:${metricsPorts[0]}/readyz`],
      'indexer-2': [build.args('indexer'), { METRICS_PORT: String(metricsPorts[1]) }, `http://127.0.0.1:${metricsPorts[1]}/readyz`],
      dispatcher: [build.args('dispatcher'), { METRICS_PORT: String(metricsPorts[2]) }, `http://127.0.0.1:${metricsPorts[2]}/readyz`],
    };
    const start = (slot: ProcessSlot): void => {
      const [args, extra] = programs[slot];
      const child = startChild(slot, args, { env: { ...env, ...extra } });
      const scan = (chunk: Buffer): void => {
        for (const line of chunk.toString().split('\n')) if (FORBIDDEN.test(line)) printed.push(`${slot}: ${line.slice(0, 300)}`);
      };
      const log = createWriteStream(join(LOG_DIR, `${slot}.log`), { flags: 'a' });
      log.write(`--- ${slot} pid ${child.process.pid} started at ${new Date().toISOString()}\n`);
      const keep = (chunk: Buffer): void => {
        scan(chunk);
        log.write(chunk);
      };
      child.process.stderr!.on('data', keep);
      child.process.stdout!.on('data', keep);
      child.process.once('close', () => log.end());
      child.process.once('exit', (code, signal) => {
        if (stopping.has(child)) return;
        exits.push(
          `${slot} exited by itself (${code ?? signal}) at ${seconds(Date.now() - runStart)}: ${child.stderrTail().split('\n').slice(-3).join(' | ')}`,
        );
        // As a platform does: started again a second later.
        if (restarting) setTimeout(() => restarting && start(slot), 1_000);
      });
      children.set(slot, child);
    };
    const ready = async (slot: ProcessSlot): Promise<boolean> => (await httpStatus(programs[slot][2])) === 200;
    const runStart = Date.now();

    // Web first: the webhooks exist before anything is indexed, so every event is theirs.
    start('web');
    await waitUntil('the web process ready', () => ready('web'), 120_000);
    const key = await createTestKey(db, 'soak', 1_000_000);
    const hooks: Hook[] = [];
    const createHook = async (network: string, filter: string, identifier: string): Promise<void> => {
      const label = `${network}-${filter.toLowerCase()}`;
      const chainId = chainIdOf(network);
      const res = await fetch(`${webUrl}/v0/createWebhook`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ webhookUrl: `${receiver.url}/${label}`, filter, identifier, chainId, apiName: `soak ${label}` }),
      });
      const body = (await res.json()) as { webhook: { id: string } };
      expect(res.status, `createWebhook ${label}: ${JSON.stringify(body)}`).to.equal(200);
      hooks.push({ label, network, chainId, filter, identifier, id: body.webhook.id });
    };
    const dt = devnet.truth;
    await createHook('devnet', 'ADDRESS', mostCommon(dt.userOps.map((o) => o.sender)));
    await createHook('devnet', 'FACTORY', mostCommon(dt.accounts.map((a) => a.factory)));
    await createHook('devnet', 'BUNDLER', mostCommon(dt.userOps.map((o) => o.bundler)));
    await createHook('devnet', 'PAYMASTER', mostCommon(dt.userOps.map((o) => o.paymaster)));
    const hooked = chains.find((c) => c.profile.name === HOOKED_NETWORK)!;
    // The simulator's blocks are known ahead: the busiest bundler and paymaster of the blocks to come.
    const ahead = hooked.truth(starts.get(HOOKED_NETWORK)!, starts.get(HOOKED_NETWORK)! + 300);
    await createHook(HOOKED_NETWORK, 'BUNDLER', mostCommon(ahead.userOps.map((o) => o.bundler)));
    await createHook(HOOKED_NETWORK, 'PAYMASTER', mostCommon(ahead.userOps.map((o) => o.paymaster)));

    for (const slot of ['indexer-1', 'indexer-2', 'dispatcher'] as const) start(slot);
    await waitUntil('every process ready', async () => (await Promise.all(SLOTS.map(ready))).every(Boolean), 180_000);
    traffic = startContinuous(devnet, { intervalMs: 3_000, opsPerTick: 2, seed: SEED });

    /** The head of a network now. */
    const headOf = async (network: string): Promise<number> =>
      network === 'devnet'
        ? Number(await devnet.rpc.call<string>('eth_blockNumber'))
        : chains.find((c) => c.profile.name === network)!.head();
    const allNetworks = [...SIMULATED, 'devnet'];
    /** Resolves once each network is indexed up to its head of now; the time it took, or null past the bound. */
    /** What is still behind: networks below their target block, processes not ready. */
    let behind: string[] = [];
    /**
     * Resolves once each network is indexed up to its head of now (and `extra` holds): the time it
     * took, or null past the bound (what was still behind is then in `behind`). Polls once a second.
     */
    const caughtUp = async (networks: string[], extra: () => Promise<boolean> = async () => true): Promise<number | null> => {
      const t0 = Date.now();
      const targets = new Map(await Promise.all(networks.map(async (n) => [chainIdOf(n), await headOf(n)] as const)));
      for (;;) {
        const states = await indexerState.listByChainIds(db, [...targets.keys()]);
        const indexed = new Map(states.map((st) => [st.chainId, st.indexedBlock]));
        behind = [...targets]
          .filter(([id, target]) => (indexed.get(id) ?? -1) < target)
          .map(([id, target]) => `${findNetworkByChainId(id)!.name} ${indexed.get(id)}/${target}`);
        if (behind.length === 0) {
          if (await extra()) return Date.now() - t0;
          behind = [
            `processes not ready: ${(await Promise.all(SLOTS.map(async (slot) => ((await ready(slot)) ? [] : [slot])))).flat().join(', ') || 'none'}`,
          ];
        }
        if (Date.now() - t0 > RECOVERY_BOUND_MS) return null;
        await sleep(1_000);
      }
    };
    const atHeads = await caughtUp(allNetworks);
    console.log(
      `  every process ready ${seconds(Date.now() - runStart)} after the start; every network at its head ${atHeads === null ? `NOT reached (behind: ${behind.join(', ')})` : `in ${seconds(atHeads)} more`}; faults begin`,
    );

    // Memory and load, sampled through the whole run.
    const sampler = setInterval(() => {
      loads.push(loadavg()[0]!);
      for (const [slot, child] of children) {
        const pid = child.process.pid;
        const mb = pid && child.process.exitCode === null ? rssMb(pid) : null;
        if (pid && mb !== null) (samples.get(slot) ?? samples.set(slot, []).get(slot)!).push({ at: Date.now(), pid, rssMb: mb });
      }
    }, PLAN.sampleMs);

    const rng = new Random(SEED);
    const faultsStart = Date.now();
    const faultsEnd = faultsStart + MINUTES * 60_000;
    let bag: FaultKind[] = [];
    const draw = (): FaultKind => {
      if (bag.length === 0) {
        bag = [...FAULT_KINDS];
        for (let i = bag.length - 1; i > 0; i--) {
          const j = rng.int(0, i);
          [bag[i], bag[j]] = [bag[j]!, bag[i]!];
        }
      }
      const kind = bag.shift()!;
      // Kills only in the first half: the second half's RSS is each process's own, uninterrupted.
      return !REDUCED && kind === 'kill' && Date.now() > faultsStart + (faultsEnd - faultsStart) / 2 ? draw() : kind;
    };
    const everyProcessReady = async () => (await Promise.all(SLOTS.map(ready))).every(Boolean);

    /** Injects one fault; answers what it did, how long it lasted and the networks to watch for recovery. */
    const inject = async (
      kind: FaultKind,
    ): Promise<{ what: string; lastedMs: number; networks: string[]; extra?: () => Promise<boolean> }> => {
      const t0 = Date.now();
      switch (kind) {
        case 'rpc': {
          const network = rng.pick(allNetworks);
          const proxy = proxies.get(network)!;
          const before = { ...proxy.stats };
          proxy.configure({
            faultRate: 0,
            faultShares: { http5xx: 0.06, http429: 0.06, internalError: 0.06, truncated: 0.05, closedSocket: 0.05 },
            nullRecentBlocks: 0.3,
          });
          await sleep(PLAN.rpcMs);
          proxy.configure({ faultRate: 0, nullRecentBlocks: 0 });
          const n = (k: keyof FaultProxy['stats']) => proxy.stats[k] - before[k];
          const what = `${network}: ${n('http5xx')} 5xx, ${n('http429')} 429, ${n('internalError')} JSON-RPC errors, ${n('truncated')} truncated, ${n('closedSocket')} dropped sockets, ${n('nullBlocks')} null recent blocks of ${n('requests')} requests`;
          return { what, lastedMs: Date.now() - t0, networks: [network] };
        }
        case 'reorg': {
          const depth = rng.pick(REORG_DEPTHS);
          const r = await reorg(devnet, depth, { seed: rng.int(1, 1_000_000) });
          const head = r.newBlocks.at(-1)!;
          // Recovered: the devnet's ops up to the new head stored in their new blocks.
          const settled = async (): Promise<boolean> => {
            const stored = new Set(
              (await readStoredTruth(db, devnet.chainId)).userOps
                .filter((o) => o.blockNumber <= head.number)
                .map((o) => `${o.userOpHash}@${o.blockNumber}`),
            );
            const want = devnet.truth.userOps.filter((o) => o.blockNumber <= head.number).map((o) => `${o.userOpHash}@${o.blockNumber}`);
            return stored.size === want.length && want.every((w) => stored.has(w));
          };
          return {
            what: `devnet, depth ${depth}: ${r.removedUserOpHashes.length} ops removed, ${r.movedUserOpHashes.length} moved`,
            lastedMs: Date.now() - t0,
            networks: ['devnet'],
            extra: settled,
          };
        }
        case 'kill': {
          const slot = rng.pick(['indexer-1', 'indexer-2', 'web', 'dispatcher'] as const);
          const child = children.get(slot)!;
          stopping.add(child);
          await child.kill('SIGKILL');
          await sleep(1_000);
          start(slot);
          return {
            what: `${slot} SIGKILLed, started again 1 s later`,
            lastedMs: Date.now() - t0,
            networks: allNetworks,
            extra: everyProcessReady,
          };
        }
        case 'stall': {
          const chain = rng.pick(chains);
          chain.stall();
          await sleep(PLAN.stallMs);
          const jump = chain.resume();
          return {
            what: `${chain.profile.name} stalled ${seconds(PLAN.stallMs)}, then jumped ${jump} blocks`,
            lastedMs: Date.now() - t0,
            networks: [chain.profile.name],
          };
        }
        case 'postgres': {
          const how = rng.pick(['paused (SIGSTOP)', 'restarted (fast)', 'crashed (immediate stop)'] as const);
          if (how === 'paused (SIGSTOP)') {
            pg.pause();
            await sleep(PLAN.outageMs);
            pg.resume();
          } else if (how === 'restarted (fast)') {
            await pg.restartFast();
          } else {
            await pg.crash();
            await sleep(PLAN.outageMs);
            await pg.start();
          }
          return { what: `PostgreSQL ${how}`, lastedMs: Date.now() - t0, networks: allNetworks, extra: everyProcessReady };
        }
        case 'redis': {
          await redis.stop();
          await sleep(PLAN.outageMs);
          await redis.start();
          return { what: `Redis killed, started again empty`, lastedMs: Date.now() - t0, networks: allNetworks, extra: everyProcessReady };
        }
      }
    };

    // The reduced run injects each kind once; the full run draws until its minutes are over.
    const more = (): boolean => (REDUCED ? faults.length < FAULT_KINDS.length : Date.now() < faultsEnd);
    while (more()) {
      await sleep(rng.int(PLAN.gapMs[0]!, PLAN.gapMs[1]!));
      if (!more()) break;
      const kind = draw();
      const at = Date.now() - faultsStart;
      const done = await inject(kind);
      const recoveryMs = await caughtUp(done.networks, done.extra);
      faults.push({
        at,
        kind,
        what: done.what,
        lastedMs: done.lastedMs,
        recoveryMs,
        behind: recoveryMs === null ? behind.join(', ') : null,
      });
      console.log(
        `  ${seconds(at).padStart(8)} ${kind}: ${done.what}; lasted ${seconds(done.lastedMs)}, ${recoveryMs === null ? `NOT recovered (behind: ${behind.join(', ')})` : `recovered ${seconds(recoveryMs)} after`}`,
      );
    }
    clearInterval(sampler);

    // The drain: no more blocks anywhere, every network indexed to its head, every event delivered.
    await traffic.stop();
    traffic = undefined;
    for (const chain of chains) chain.stall();
    const drainMs = await caughtUp(allNetworks, everyProcessReady);
    summary.push(
      `drain: every network at its head ${drainMs === null ? `NOT reached (behind: ${behind.join(', ')})` : `${seconds(drainMs)} after the faults`}`,
    );
    expect(drainMs, 'every network indexed to its head after the faults').to.not.equal(null);

    // The events each webhook must have had: the truth's, up to the last block final on its network.
    const expected = new Map<string, Set<string>>();
    for (const hook of hooks) {
      let truth: EventTruth;
      if (hook.network === 'devnet') truth = devnet.truth;
      else {
        const chain = chains.find((c) => c.profile.name === hook.network)!;
        const finalDepth = NETWORKS.find((n) => n.name === hook.network)!.finalityDepth;
        truth = chain.truth(starts.get(hook.network)!, (await indexedBlock(db, chain.chainId)) - finalDepth - 1);
      }
      const blockOf = new Map(truth.userOps.map((o) => [o.userOpHash, o.blockNumber]));
      expected.set(
        hook.id,
        new Set([...expectedEvents(truth, hook.filter, hook.identifier)].map((e) => `${e}@${blockOf.get(e.split(':')[1]!)}`)),
      );
    }
    type Body = {
      type: string;
      webhookId: string;
      data: { userOp?: { userOpHash: string }; userOpHash?: string; block?: { number: number; hash: string } };
    };
    const deliveredEvents = (): { delivered: Map<string, Set<string>>; idsPerEvent: Map<string, Set<string>> } => {
      const delivered = new Map<string, Set<string>>();
      const idsPerEvent = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const body = JSON.parse(r.body) as Body;
        if (body.type === 'reorg') continue;
        const event = `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}@${body.data.block?.number}`;
        const key = `${body.webhookId} ${event} ${body.data.block?.hash}`;
        (idsPerEvent.get(key) ?? idsPerEvent.set(key, new Set()).get(key)!).add(String(r.headers['webhook-id']));
        if (r.status >= 200 && r.status < 300)
          (delivered.get(body.webhookId) ?? delivered.set(body.webhookId, new Set()).get(body.webhookId)!).add(event);
      }
      return { delivered, idsPerEvent };
    };
    const missing = (): string[] => {
      const { delivered } = deliveredEvents();
      return hooks.flatMap((h) => [...expected.get(h.id)!].filter((e) => !delivered.get(h.id)?.has(e)).map((e) => `${h.label} ${e}`));
    };
    const t0 = Date.now();
    await waitUntil('every webhook event delivered', () => missing().length === 0, RECOVERY_BOUND_MS).catch(() => {});
    const { idsPerEvent } = deliveredEvents();
    const twoIds = [...idsPerEvent.entries()].filter(([, ids]) => ids.size !== 1).map(([event, ids]) => `${event}: ${[...ids].join(', ')}`);
    const undelivered = missing();
    const ids = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    const perHook = hooks.map((h) => `${h.label} ${expected.get(h.id)!.size}`).join(', ');
    summary.push(
      `webhooks: ${receiver.received.length} requests, ${ids.size} webhook-ids, ${idsPerEvent.size} events (expected per hook: ${perHook}); ` +
        `${undelivered.length} undelivered, ${twoIds.length} under more than one id; all delivered ${seconds(Date.now() - t0)} into the drain`,
    );

    // Every network's store against its truth.
    const differences: string[] = [];
    const record = (got: unknown, want: unknown, what: string): void => {
      if (!isDeepStrictEqual(got, want)) differences.push(what);
    };
    let ops = 0;
    for (const chain of chains) ops += await expectChainMatchesTruth(db, chain, starts.get(chain.profile.name)!, record);
    await expectMatchesTruth(db, { ...devnet.truth, plainTransfers: [] }, (got, want, what) => record(got, want, `devnet ${what}`));
    ops += devnet.truth.userOps.length;
    summary.push(
      `data: ${allNetworks.length} networks, ${ops} ops; ${differences.length === 0 ? 'every store equal to its truth' : `DIFFERENT: ${differences.join(', ')}`}`,
    );

    expect(differences, 'networks whose store differs from the truth').to.deep.equal([]);
    expect(undelivered.slice(0, 20), 'webhook events never delivered').to.deep.equal([]);
    expect(twoIds.slice(0, 20), 'webhook events under more than one webhook-id').to.deep.equal([]);
    expect(printed.slice(0, 20), 'MaxListenersExceededWarning or unhandled rejections printed').to.deep.equal([]);
  });

  function printSummary(): void {
    const length = REDUCED ? 'one fault of each kind' : `${MINUTES} min of faults`;
    const lines = [`\nThe soak${REDUCED ? ' (reduced)' : ''}: seed ${SEED}, ${length}, ${SIMULATED.length} simulated networks + devnet`];
    lines.push('', '| at | fault | what | lasted | recovered after |', '|---|---|---|---|---|');
    for (const f of faults)
      lines.push(
        `| ${seconds(f.at)} | ${f.kind} | ${f.what} | ${seconds(f.lastedMs)} | ${f.recoveryMs === null ? `NOT recovered (behind: ${f.behind})` : seconds(f.recoveryMs)} |`,
      );
    const byKind = FAULT_KINDS.map((k) => {
      const of = faults.filter((f) => f.kind === k);
      const times = of.flatMap((f) => (f.recoveryMs === null ? [] : [f.recoveryMs]));
      return `${k} ${of.length} (${of.length - times.length} not recovered${times.length ? `, recovery max ${seconds(Math.max(...times))}` : ''})`;
    });
    lines.push('', `faults: ${faults.length}: ${byKind.join('; ')}`);
    lines.push(
      '',
      '| process | pid measured | samples | RSS first → last (MB) | growth per hour (MB/h) | restarts |',
      '|---|---|---|---|---|---|',
    );
    for (const [slot, all] of samples) {
      const pids = [...new Set(all.map((s) => s.pid))];
      const pid = pids.at(-1)!;
      const own = all.filter((s) => s.pid === pid);
      const warm = own.filter((s) => s.at >= own[0]!.at + PLAN.warmUpMs);
      const fit = warm.length >= 3 ? slope(warm.map((s) => [(s.at - warm[0]!.at) / 3_600_000, s.rssMb])) : NaN;
      lines.push(
        `| ${slot} | ${pid} | ${warm.length} after ${seconds(PLAN.warmUpMs)} warm-up | ${own[0]!.rssMb.toFixed(0)} → ${own.at(-1)!.rssMb.toFixed(0)} | ${Number.isNaN(fit) ? 'too few samples' : fit.toFixed(1)} | ${pids.length - 1} |`,
      );
    }
    if (loads.length > 0)
      lines.push(
        '',
        `load average (1 min, ${loads.length} samples): mean ${(loads.reduce((s, l) => s + l, 0) / loads.length).toFixed(2)}, max ${Math.max(...loads).toFixed(2)}`,
      );
    lines.push(...summary.map((s) => `- ${s}`));
    if (exits.length > 0) lines.push('processes that exited by themselves:', ...exits.map((e) => `  - ${e}`));
    if (printed.length > 0) lines.push('forbidden output:', ...printed.slice(0, 20).map((p) => `  - ${p}`));
    console.log(lines.join('\n'));
  }
});
