/**
 * Runs a local anvil node: loopback only, chain id 31337 (or another one given), a free port
 * (anvil binds port 0 and prints the one it got), large blocks so several bundles fit in one. The
 * node is killed on stop(), when this Node process exits, and even when it is killed outright (a
 * watchdog shell notices its stdin pipe closing), so no anvil outlives its owner.
 *
 * anvil writes the states it no longer keeps in memory to disk (up to 3,600 of them, each a full
 * snapshot: about 4 GB for a 20,000-op devnet, over 70 GB for 100,000 ops) and only removes them
 * when it shuts down cleanly; killed, it leaves them in ~/.foundry/anvil/tmp for good
 * (https://github.com/foundry-rs/foundry/issues/4251), enough to fill a disk. Here each node gets
 * its own `--cache-path` under the system temp folder, removed with the node whichever way it stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Rpc } from './rpc.js';

export const DEVNET_CHAIN_ID = 31337;
/** anvil's well-known default mnemonic; its accounts are pre-funded on every start. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export type StartChainOptions = {
  /** Chain id (default 31337, the `devnet` network; 31338 is `devnet2`, for tests of two chains). */
  chainId?: number;
  /** TCP port on 127.0.0.1; 0 or absent = any free port. */
  port?: number;
  /** Timestamp of the genesis block (seconds). Lets generated history lie in the past. */
  genesisTimestamp?: number;
  /** How many pre-funded dev accounts anvil creates (default 12). */
  accounts?: number;
  /** Block gas limit (default 200M, room for several large bundles per block). */
  blockGasLimit?: bigint;
};

export type Chain = {
  rpcUrl: string;
  port: number;
  chainId: number;
  rpc: Rpc;
  /** Where anvil persists the states it evicts from memory; removed when the node stops. */
  stateDir: string;
  /** anvil's process id (the indexer benchmark reads the CPU time it spent answering). */
  pid: number;
  stop(): Promise<void>;
};

const STARTUP_TIMEOUT_MS = 20_000;

/**
 * The anvil binary: the one the npm package of this platform ships (an optional dependency, called
 * directly: no npm postinstall needed), else an `anvil` on PATH (Foundry installed by hand). The
 * registry has a package for linux-x64 only, so elsewhere `npm ci` skips it and this says what to do.
 */
export function anvilBinary(platform: string = process.platform, cpu: string = process.arch, path = process.env.PATH ?? ''): string {
  const pkg = `@foundry-rs/anvil-${platform}-${cpu === 'x64' ? 'amd64' : cpu}`;
  try {
    return join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), 'bin', 'anvil');
  } catch {
    // Not installed for this platform: look on PATH.
  }
  const onPath = path
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'anvil'))
    .find((file) => existsSync(file));
  if (onPath) return onPath;
  throw new Error(
    `No anvil binary for ${platform}-${cpu}: npm ships one for linux-x64 only (${pkg} is not installed), and none is on PATH. ` +
      'Install Foundry (its anvil on PATH) to run the demo chain, or index a real chain instead: set NETWORKS and RPC_URL_<NETWORK> (or RPC_URL_DEVNET).',
  );
}

export async function startChain(opts: StartChainOptions = {}): Promise<Chain> {
  const chainId = opts.chainId ?? DEVNET_CHAIN_ID;
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(opts.port ?? 0),
    '--chain-id',
    String(chainId),
    '--accounts',
    String(opts.accounts ?? 12),
    '--balance',
    '1000000',
    '--gas-limit',
    String(opts.blockGasLimit ?? 200_000_000n),
    '--hardfork',
    'prague',
    // Arrival order inside a block keeps runs reproducible (the default sorts by fee).
    '--order',
    'fifo',
  ];
  if (opts.genesisTimestamp !== undefined) args.push('--timestamp', String(opts.genesisTimestamp));
  const stateDir = mkdtempSync(join(tmpdir(), 'opscan-anvil-'));
  args.push('--cache-path', stateDir);
  const removeStateDir = (): void => {
    try {
      // Retried: a node killed a moment ago may still be finishing a write into it.
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort (this also runs in an 'exit' handler, which must not throw).
    }
  };

  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const watchdog = spawnWatchdog(child, stateDir);
  const killOnExit = (): void => {
    child.kill('SIGKILL');
    watchdog.kill('SIGKILL');
    removeStateDir();
  };
  process.once('exit', killOnExit);

  // anvil logs every RPC method it serves: drained so its stdout pipe never fills.
  const recentOutput = drainOutput(child);

  let port: number;
  try {
    port = await waitForListening(child, recentOutput);
  } catch (err) {
    killOnExit();
    process.removeListener('exit', killOnExit);
    throw err;
  }
  const rpcUrl = `http://127.0.0.1:${port}`;
  const rpc = new Rpc(rpcUrl);
  await waitForRpc(rpc, chainId);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= stopChild(child).finally(() => {
      watchdog.kill('SIGKILL');
      process.removeListener('exit', killOnExit);
      removeStateDir();
    });
    return stopping;
  };
  return { rpcUrl, port, chainId, rpc, stateDir, pid: child.pid!, stop };
}

/**
 * Reads a child's stdout and stderr as they come (a full pipe would block it), keeping the last 50
 * chunks to quote when it fails.
 */
export function drainOutput(child: ChildProcess): string[] {
  const recent: string[] = [];
  const remember = (chunk: Buffer): void => {
    recent.push(chunk.toString());
    if (recent.length > 50) recent.shift();
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);
  return recent;
}

/**
 * A shell that blocks reading a pipe from us and, when the pipe closes, kills `child` (anvil, a
 * bundler) and removes its state folder if it has one: that happens when this process dies in any
 * way, SIGKILL included, which no 'exit' handler can catch. (The folder comes from mkdtemp: no
 * quote in its name.)
 */
export function spawnWatchdog(child: ChildProcess, stateDir?: string): ChildProcess {
  const cleanup = stateDir ? `; sleep 1; rm -rf '${stateDir}'` : '';
  const watchdog = spawn('/bin/sh', ['-c', `read _ ; kill -9 ${child.pid} 2>/dev/null${cleanup}`], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.unref();
  child.once('exit', () => watchdog.kill('SIGKILL'));
  return watchdog;
}

function waitForListening(child: ChildProcess, recentOutput: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error('anvil did not start in time')), STARTUP_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(seen);
      if (m) {
        cleanup();
        resolve(Number(m[1]));
      }
    };
    const onExit = (code: number | null): void =>
      fail(new Error(`anvil exited (code ${code}) before listening:\n${recentOutput.join('')}`));
    const onError = (err: Error): void => fail(err);
    function cleanup(): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    function fail(err: Error): void {
      cleanup();
      reject(err);
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

async function waitForRpc(rpc: Rpc, chainId: number): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    try {
      const id = await rpc.call<string>('eth_chainId');
      if (Number(id) !== chainId) throw new Error(`anvil answered chain id ${id}`);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** SIGTERM, then SIGKILL if the child has not exited within 3 s. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
