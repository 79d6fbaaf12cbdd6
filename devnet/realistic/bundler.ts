/**
 * A real ERC-4337 bundler as its own OS process: Alto (`@pimlico/alto` from npm), started against
 * the devnet's anvil with executor keys from anvil's accounts. It deploys its own simulation
 * contracts on start (CREATE2 through the deterministic deployer, salted with its utility key), so
 * several bundlers run side by side on one chain, competing for the same ops.
 *
 * `--safe-mode false`: Alto's safe mode traces validation with a JavaScript tracer that anvil's
 * debug_traceCall does not run (every op is then refused); without it the ERC-7562 rules are not
 * enforced, which changes which ops a bundler would accept, not what it puts on chain.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { drainOutput, spawnWatchdog, stopChild } from '../chain.js';
import { Rpc } from '../rpc.js';

export type Bundler = {
  name: string;
  /** Alto's JSON-RPC endpoint (eth_sendUserOperation, eth_getUserOperationReceipt, pimlico_*). */
  url: string;
  rpc: Rpc;
  /** Addresses of the EOAs that send its bundles (lower-case). */
  executors: string[];
  /** Its last lines of output (warnings and errors): why it dropped an op, when it does. */
  recentOutput(): string;
  stop(): Promise<void>;
};

export type BundlerOptions = {
  name: string;
  rpcUrl: string;
  entryPoints: string[];
  executorKeys: string[];
  executorAddresses: string[];
  utilityKey: string;
  /**
   * Alto's `--max-block-range`: how many blocks back its op reads (eth_getUserOperationReceipt,
   * eth_getUserOperationByHash) search the logs. Unset, they search what eth_getLogs searches without
   * a range (the latest block), and older ops come from its memory of those it saw included.
   */
  maxBlockRange?: number;
};

const STARTUP_TIMEOUT_MS = 60_000;

/** Alto's command-line entry (the package's `bin`; its `exports` name only the library). */
function altoCli(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@pimlico/alto')), 'cli', 'alto.js');
}

export async function startBundler(opts: BundlerOptions): Promise<Bundler> {
  const port = await freePort();
  const args = [
    altoCli(),
    ...['--entrypoints', opts.entryPoints.join(',')],
    ...['--executor-private-keys', opts.executorKeys.join(',')],
    ...['--utility-private-key', opts.utilityKey],
    ...['--rpc-url', opts.rpcUrl],
    ...['--port', String(port)],
    ...['--safe-mode', 'false'],
    ...['--deploy-simulations-contract', 'true'],
    // Poll the chain every 250 ms; bundle what arrived within 100-500 ms (Alto's defaults: 1 s).
    ...['--block-time', '250'],
    ...['--min-bundle-interval', '100'],
    ...['--max-bundle-interval', '500'],
    ...['--log-level', 'warn'],
    ...(opts.maxBlockRange === undefined ? [] : ['--max-block-range', String(opts.maxBlockRange)]),
    // One JSON object per line: a dropped op's log then carries the reason (the pretty printer shows only the message).
    '--json',
  ];
  // Alto reads ALTO_* variables and a .env file in its working directory: give it neither.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALTO_') && k !== 'SENTRY_DSN'));
  const cwd = mkdtempSync(join(tmpdir(), 'opscan-alto-'));
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const watchdog = spawnWatchdog(child, cwd);
  const recentOutput = drainOutput(child);
  const killOnExit = (): void => {
    child.kill('SIGKILL');
    watchdog.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const url = `http://127.0.0.1:${port}/rpc`;
  const rpc = new Rpc(url);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= stopChild(child).finally(() => {
      watchdog.kill('SIGKILL');
      process.removeListener('exit', killOnExit);
      rmSync(cwd, { recursive: true, force: true });
    });
    return stopping;
  };
  try {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`bundler ${opts.name} exited (code ${child.exitCode}) before serving:\n${recentOutput.join('')}`);
      if (Date.now() > deadline) throw new Error(`bundler ${opts.name} did not answer within ${STARTUP_TIMEOUT_MS} ms`);
      try {
        await rpc.call('eth_supportedEntryPoints');
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    name: opts.name,
    url,
    rpc,
    executors: opts.executorAddresses.map((a) => a.toLowerCase()),
    recentOutput: () => recentOutput.join('').slice(-30_000),
    stop,
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
