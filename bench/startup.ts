/**
 * Time to the banner: `npm start` as the README runs it (the realistic demo, then the generated one),
 * first on an empty data folder, then again on the same data, each timed from the spawn of `npm
 * start` to its "opscan is running" line. Its JSON log lines (LOG_FORMAT=json, LOG_LEVEL=debug: both
 * documented settings; PORT and DATA_DIR so that a run takes no one else's) split the time into
 * phases: node, tsx and the imports until the store is open and migrated; the demo chain (anvil, the
 * EntryPoints and fixtures, the vendors' recipe, two Alto bundlers); the generated history (300 ops,
 * then 24 through the bundlers); and the indexer until a first op is indexed. The baseline, in the
 * same run: the same `npm` and `tsx` starting an empty script.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/faults/support/childProcess.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BANNER_WAIT_MS = 300_000;

type Phases = { total: number; storeReady: number; demoChain: number; history: number; firstOpIndexed: number };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};
const seconds = (ms: number) => Math.round(ms) / 1000;

/** One `npm start` until its banner line, then SIGINT to its process group; its phases in ms. */
async function timeStart(dataDir: string, env: Record<string, string>): Promise<Phases> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn('npm', ['start'], {
    cwd: REPO,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
      ...env,
    },
  });
  const times = new Map<string, number>();
  let tail = '';
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within ${BANNER_WAIT_MS / 1000} s: ${tail.slice(-2000)}`)), BANNER_WAIT_MS);
    const onLine = (line: string) => {
      try {
        const { msg, time } = JSON.parse(line) as { msg?: string; time?: number };
        if (msg && time && !times.has(msg)) times.set(msg, time);
        if (msg === 'opscan is running') {
          clearTimeout(timer);
          resolve();
        }
      } catch {
        // npm's own lines
      }
    };
    let buffer = '';
    const onData = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      lines.forEach(onLine);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}) before its banner: ${tail.slice(-2000)}`)));
  });
  try {
    await done;
  } finally {
    process.kill(-child.pid!, 'SIGINT');
    await new Promise((resolve) => {
      const kill = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 20_000);
      child.once('exit', () => resolve(clearTimeout(kill)));
      if (child.exitCode !== null) resolve(clearTimeout(kill));
    });
  }
  const at = (msg: string) => times.get(msg) ?? NaN;
  const banner = at('opscan is running');
  const storeReady = at('store ready');
  const historyStart = at('devnet started; generating demo traffic');
  const webUp = at('web listening');
  return {
    total: banner - started,
    storeReady: storeReady - started,
    demoChain: historyStart - storeReady,
    history: webUp - historyStart,
    firstOpIndexed: banner - webUp,
  };
}

/** The same npm and tsx starting an empty script: what any `npm start` costs before opscan's code runs. */
function timeBareStart(): number {
  const dir = mkdtempSync(join(tmpdir(), 'opscan-bench-bare-'));
  try {
    const script = join(dir, 'empty.ts');
    writeFileSync(script, 'export {};\n');
    const started = Date.now();
    execFileSync('npm', ['exec', '--', 'tsx', script], {
      cwd: REPO,
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    return Date.now() - started;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type StartupBenchOptions = { runs: number };

export async function runStartupBench(opts: StartupBenchOptions) {
  const samples: Record<string, Phases[]> = { realisticFirst: [], realisticSecond: [], generatedFirst: [] };
  const bare: number[] = [];
  for (let i = 0; i < opts.runs; i++) {
    bare.push(timeBareStart());
    const dataDir = mkdtempSync(join(tmpdir(), 'opscan-bench-start-'));
    try {
      samples.realisticFirst!.push(await timeStart(dataDir, {}));
      samples.realisticSecond!.push(await timeStart(dataDir, {}));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    const generatedDir = mkdtempSync(join(tmpdir(), 'opscan-bench-start-'));
    try {
      samples.generatedFirst!.push(await timeStart(generatedDir, { DEMO_TRAFFIC: 'generated' }));
    } finally {
      rmSync(generatedDir, { recursive: true, force: true });
    }
  }
  const bareMs = median(bare);
  const phases = Object.fromEntries(
    Object.entries(samples).map(([name, runs]) => [
      name,
      Object.fromEntries((Object.keys(runs[0]!) as Array<keyof Phases>).map((k) => [`${k}S`, seconds(median(runs.map((r) => r[k])))])),
    ]),
  ) as Record<string, Record<string, number>>;
  const summary: Record<string, number> = { bareStartS: seconds(bareMs) };
  for (const [name, p] of Object.entries(phases)) {
    summary[`${name}S`] = p.totalS!;
    summary[`${name}PerBareStart`] = Math.round((p.totalS! / seconds(bareMs)) * 10) / 10;
  }
  return { summary, runs: opts.runs, phases, samples };
}
