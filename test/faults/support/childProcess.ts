import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * One of opscan's processes (web, indexer, dispatcher) run as a real child process from TypeScript,
 * so a SIGKILL is a real crash: no shutdown hook runs and transactions are cut mid-way. The last
 * lines of its stderr are kept for the failure message of a test that needs them.
 */

export type Child = {
  readonly name: string;
  readonly process: ChildProcess;
  /** The last lines the child wrote to stderr. */
  stderrTail(): string;
  /** Resolves once the child printed `marker` on stdout (rejects if it exits first). */
  printed(marker: string, timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
};

const TAIL_LINES = 40;

/**
 * `script` is a path relative to the repository root, run with `node --import tsx`, or `node`'s
 * whole argument list (a compiled program, as bench/procfile.ts gives the Procfile's).
 */
export function startChild(
  name: string,
  script: string | string[],
  options: { args?: string[]; env: Record<string, string | undefined> },
): Child {
  const program = typeof script === 'string' ? ['--import', 'tsx', fileURLToPath(new URL(`../../../${script}`, import.meta.url))] : script;
  const child = spawn(process.execPath, [...program, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => {
    tail.push(...chunk.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - TAIL_LINES));
    if (process.env.FAULTS_DEBUG) process.stderr.write(`[${name}] ${chunk.toString()}`);
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout = (stdout + chunk.toString()).slice(-4096);
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    process: child,
    stderrTail: () => tail.join('\n'),
    printed(marker, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`${name} did not print "${marker}" in ${timeoutMs} ms\n${tail.join('\n')}`)),
          timeoutMs,
        );
        const check = () => {
          if (stdout.includes(marker)) done();
        };
        const onExit = (code: number | null) => done(new Error(`${name} exited (${code}) before printing "${marker}"\n${tail.join('\n')}`));
        function done(error?: Error) {
          clearTimeout(timer);
          child.stdout.off('data', check);
          child.off('exit', onExit);
          if (error) reject(error);
          else resolve();
        }
        child.stdout.on('data', check);
        child.once('exit', onExit);
        check();
      });
    },
    kill(signal = 'SIGKILL') {
      if (exited()) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    },
  };
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `check` until it holds; throws with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
