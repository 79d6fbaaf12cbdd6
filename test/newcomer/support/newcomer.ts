/**
 * A newcomer's machine, as far as a test can make one: a clean copy of the tree (the files a clone
 * would have, plus new files not yet committed), `npm ci` in it, and `npm start` run in a
 * pseudo-terminal (`script`) with nothing in the environment but PATH and HOME, stopped by a Ctrl-C
 * typed into that terminal. Used by the README's end-to-end test and by the start-up bench.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** What a person's shell has that matters here; nothing of this machine's opscan settings. */
export function newcomerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...extra };
}

/** A fresh folder holding the tree's files (tracked, and untracked but not ignored), nothing installed. */
export function copyTree(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'opscan-newcomer-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO_DIR })
    .toString()
    .split('\0')
    .filter(Boolean);
  // A tracked file deleted in the working tree is not part of it.
  const present = execFileSync('git', ['ls-files', '-z', '--deleted'], { cwd: REPO_DIR }).toString().split('\0');
  const list = files.filter((f) => !present.includes(f)).join('\0');
  execFileSync('sh', ['-c', `tar -C "${REPO_DIR}" --null -T - -cf - | tar -C "${dir}" -xf -`], { input: list, maxBuffer: 1 << 26 });
  return dir;
}

/** `npm ci` as a newcomer runs it (the README's first command, with a lockfile). */
export function npmCi(dir: string): void {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, env: newcomerEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
}

// eslint-disable-next-line no-control-regex -- terminal escape sequences are control characters
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]/g;

/** A terminal's output as the lines a person reads: colours and cursor moves gone, a rewritten line's last text kept. */
export function screenLines(raw: string): string[] {
  return raw
    .replace(ANSI, '')
    .split('\n')
    .map((line) => line.replace(/\r+$/, '').split('\r').pop()!)
    .filter((line) => line.trim() !== '');
}

export type TerminalRun = {
  child: ChildProcess;
  /** Every line shown so far. */
  lines(): string[];
  /** Resolves with the first shown line matching `pattern`; rejects after `timeoutMs` or when the command ends first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Ctrl-C typed into the terminal: SIGINT to its foreground process group, as a person's key press. */
  interrupt(): void;
  /** The command's exit code (null when killed by a signal), once it has ended. */
  exited: Promise<number | null>;
};

/** Runs `command` in `cwd` inside a pseudo-terminal (200 columns) with exactly `env`. */
export function runInTerminal(cwd: string, command: string, env: Record<string, string>): TerminalRun {
  const child = spawn('script', ['-qfec', `stty cols 200 rows 50; exec ${command}`, '/dev/null'], {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let raw = '';
  const onData = (chunk: Buffer) => {
    raw += chunk.toString('utf8');
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    child,
    lines: () => screenLines(raw),
    async waitForLine(pattern, timeoutMs) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const line = screenLines(raw).find((l) => pattern.test(l));
        if (line !== undefined) return line;
        if (ended) throw new Error(`\`${command}\` ended before printing ${pattern}`);
        if (Date.now() > until) throw new Error(`\`${command}\` printed no ${pattern} within ${timeoutMs / 1000} s`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    interrupt() {
      child.stdin.write('\x03');
    },
    exited,
  };
}

/** Processes still running from `dir`: its path in their command line or their working directory. */
export function processesFrom(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // Not ours to read, or gone.
      }
      if (cmdline.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) found.push(`${pid} ${cmdline.slice(0, 160)}`);
    } catch {
      // Ended while being read.
    }
  }
  return found;
}

/** Kills anything of the copy still running (a failed start must not hold the port for the next). */
export function killProcessesFrom(dir: string): void {
  for (const p of processesFrom(dir)) {
    try {
      process.kill(Number(p.split(' ')[0]), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Removes the copy (and kills anything of it still running, so a failed test leaves nothing behind). */
export function removeTree(dir: string): void {
  killProcessesFrom(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** A pino-pretty line at info level; its message is the text between the logger's name and the fields. */
const INFO_LINE = /^\[[\d:.]+\] INFO \([^)]*\): (.*?)(?: \{.*\})?$/;

/**
 * The info-level messages shown more than `allowed` times in `lines`, with their counts: what a
 * process says per batch, per tick or per request, which belongs at debug. Numbers and hex values in
 * a message count as one message (`3 ops` and `5 ops` are the same line said twice).
 */
export function repeatedInfoMessages(lines: string[], allowed: number): Record<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const message = INFO_LINE.exec(line)?.[1];
    if (message === undefined) continue;
    const shape = message.replace(/0x[0-9a-fA-F]+/g, '0x…').replace(/\d+/g, 'N');
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].filter(([, count]) => count > allowed));
}
