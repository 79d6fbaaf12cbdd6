/**
 * What an operator sees when a process starts. `.env` in the working
 * directory is read (and said so), the environment winning over it; a process that cannot start
 * (a bad variable, an unmigrated database) prints one line on stderr and exits 1, without a stack.
 * Each process runs as a child in a fresh folder of its own, as an operator would run it.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { useTestDb } from '../helpers/db.js';
import { freePort } from '../helpers/freePort.js';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** tsx by its path: a child whose working directory is elsewhere could not find it by name. */
const tsx = pathToFileURL(path.join(repoDir, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

const ENTRIES = {
  web: 'server/main.ts',
  indexer: 'indexer/main.ts',
  dispatcher: 'webhooks/main.ts',
  /** What `npm start` runs. */
  opscan: 'bin/start.ts',
  migrate: 'bin/migrate.ts',
} as const;
type Name = keyof typeof ENTRIES;

/** Only what a process needs from the test's environment: nothing of this machine's opscan settings. */
const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_FORMAT: 'json' };

function start(name: Name, cwd: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', tsx, path.join(repoDir, ENTRIES[name])], {
    cwd,
    env: { ...baseEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

type Ended = { code: number | null; stdout: string; stderr: string };

/** Runs a process that is expected to give up, to its end. */
function runToEnd(name: Name, cwd: string, env: Record<string, string>): Promise<Ended> {
  const child = start(name, cwd, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Exit code 1 and exactly one line on stderr, saying what is wrong, with no stack frame. */
function expectOneLine(ended: Ended, name: Name, reason: RegExp): void {
  expect(ended.code, ended.stderr).to.equal(1);
  const lines = ended.stderr.split('\n').filter(Boolean);
  expect(lines, ended.stderr).to.have.length(1);
  expect(lines[0])
    .to.match(new RegExp(`^${name} cannot start: `))
    .and.match(reason);
  expect(ended.stderr).not.to.match(/^\s+at /m);
}

describe('process start-up: .env, and one clear line when a process cannot start', function () {
  this.timeout(120_000);
  const t = useTestDb();
  const folders: string[] = [];
  const children: ChildProcess[] = [];
  const folder = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'opscan-startup-'));
    folders.push(dir);
    return dir;
  };
  afterEach(async () => {
    const running = children.splice(0).filter((c) => c.exitCode === null);
    await Promise.all(running.map((c) => new Promise((resolve) => (c.once('exit', resolve), c.kill('SIGTERM')))));
    await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('reads .env from the working directory, logs which variables it set, and lets the environment win', async function () {
    if (!t.url) this.skip(); // the web process needs a migrated database of its own
    const [envPort, filePort] = [await freePort(), await freePort()];
    const adminToken = 'a'.repeat(40);
    const dir = await folder();
    await writeFile(
      path.join(dir, '.env'),
      `# the operator's settings\nADMIN_TOKEN=${adminToken}\nDATABASE_URL=${t.url}\nPORT=${filePort}\n`,
    );
    const web = start('web', dir, { PORT: String(envPort) });
    children.push(web);
    let stdout = '';
    web.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const lines = () => stdout.split('\n').filter(Boolean);
    const logged = (msg: string) => lines().find((l) => (JSON.parse(l) as { msg: string }).msg === msg);
    await new Promise<void>((resolve, reject) => {
      web.once('exit', (code) => reject(new Error(`web exited ${code}: ${stdout}`)));
      web.stdout!.on('data', () => logged('web listening') && resolve());
    });

    const read = JSON.parse(logged('read .env')!) as { path: string; loaded: string[]; keptFromEnvironment: string[] };
    expect(read.path).to.equal(path.join(dir, '.env'));
    expect(read.loaded).to.deep.equal(['ADMIN_TOKEN', 'DATABASE_URL']);
    expect(read.keptFromEnvironment).to.deep.equal(['PORT']);
    expect(stdout).not.to.include(adminToken);
    // The environment's port, and the admin API on, with the token from .env.
    const res = await fetch(`http://127.0.0.1:${envPort}/admin/v1/plans`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).to.equal(200);
  });

  for (const name of Object.keys(ENTRIES) as Name[]) {
    it(`${name}: a bad variable is one line on stderr naming it, exit code 1`, async () => {
      const ended = await runToEnd(name, await folder(), { LOG_LEVEL: 'loud', ADMIN_TOKEN: 'short' });
      const problems = name === 'web' || name === 'opscan' ? /LOG_LEVEL: .*; ADMIN_TOKEN: must be at least 32 characters/ : /LOG_LEVEL: /;
      expectOneLine(ended, name, problems);
    });
  }

  it('web on a database that was never migrated: one line saying to migrate, exit code 1', async () => {
    // A fresh embedded store in an empty folder: what `npm run web` finds before `npm run migrate`.
    const ended = await runToEnd('web', await folder(), { PORT: String(await freePort()) });
    expectOneLine(ended, 'web', /The database is not migrated \(pending: 0001_.*\)\. Run `npm run migrate`/);
  });
});
