/**
 * The README's two commands, as a newcomer runs them: a clean copy of the tree, `npm ci`, then
 * `npm start` in a terminal with nothing set but PATH and HOME. The banner's curls are run as
 * printed, the status page and GraphiQL open in Chromium, a webhook created as docs/webhooks.md shows
 * gets a signed delivery on a local receiver, Ctrl-C ends every process of it within 15 s; a second
 * start on the same data is clean, and the generated demo traffic starts too. `.ci/run` runs this on
 * every submission (`npm run test:newcomer`); nothing in the environment skips it.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { existsSync, rmSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { CHROMIUM, CHROMIUM_FLAGS } from '../helpers/chromium.js';
import { isPortFree } from '../helpers/freePort.js';
import {
  copyTree,
  killProcessesFrom,
  newcomerEnv,
  npmCi,
  processesFrom,
  removeTree,
  repeatedInfoMessages,
  runInTerminal,
  type TerminalRun,
} from './support/newcomer.js';

const URL_BASE = 'http://127.0.0.1:3000';
const BANNER_WAIT_MS = 300_000;
const STOP_WAIT_MS = 15_000;
/** A pino-pretty line at error level or above. */
const ERROR_LINE = /^\[[\d:.]+\] (ERROR|FATAL)\b|cannot start/;
/** How long after the banner the log is read for chatter: the first minute a newcomer watches. */
const QUIET_LOG_MS = 60_000;
/** Start-up says each thing once per process or network; a message said more often is per-batch chatter. */
const INFO_REPEATS_ALLOWED = 3;

type Json = Record<string, unknown>;

/** Runs a command line as printed, in a shell; its body and HTTP status. */
function runPrinted(command: string, env: Record<string, string> = newcomerEnv()): { status: number; body: string } {
  const out = execFileSync('sh', ['-c', `${command} --silent --show-error --write-out '\\n%{http_code}'`], { env }).toString();
  const cut = out.lastIndexOf('\n');
  return { status: Number(out.slice(cut + 1)), body: out.slice(0, cut) };
}

/** `npm start` in a terminal; `use` runs once the banner is out; then Ctrl-C, and nothing of it may remain. */
async function withStart(
  dir: string,
  extraEnv: Record<string, string>,
  use: (run: TerminalRun, banner: string[]) => Promise<void>,
): Promise<void> {
  if (!(await isPortFree(3000))) throw new Error('port 3000 is taken: npm start (PORT unset) needs it');
  const run = runInTerminal(dir, 'npm start', newcomerEnv(extraEnv));
  try {
    await run.waitForLine(/opscan is running/, BANNER_WAIT_MS);
    await run.waitForLine(/Ctrl-C stops everything/, 10_000);
    const lines = run.lines();
    const banner = lines.slice(lines.findIndex((l) => /opscan is running/.test(l)));
    await use(run, banner);
    run.interrupt();
    const stoppedBy = Date.now() + STOP_WAIT_MS;
    const code = await Promise.race([run.exited, new Promise((r) => setTimeout(r, STOP_WAIT_MS, 'running'))]);
    expect(code, 'npm start after Ctrl-C').to.not.equal('running');
    let left = processesFrom(dir);
    while (left.length > 0 && Date.now() < stoppedBy) {
      await new Promise((r) => setTimeout(r, 250));
      left = processesFrom(dir);
    }
    expect(left, 'processes left 15 s after Ctrl-C').to.deep.equal([]);
    expect(run.lines().filter((l) => ERROR_LINE.test(l))).to.deep.equal([]);
  } catch (err) {
    // A new error: mocha prints an assertion's message only up to its ": expected", and the lines are the point.
    const last = run.lines().slice(-40).join('\n');
    throw new Error(`${(err as Error).message}\n--- npm start's last 40 lines ---\n${last}`, { cause: err });
  } finally {
    run.child.kill('SIGKILL');
    killProcessesFrom(dir);
  }
}

/** The banner's three curls, each answering 200 with data; the second names a real op. */
function checkCurls(banner: string[], env?: Record<string, string>): void {
  const curls = banner.map((l) => l.trim()).filter((l) => l.startsWith('curl '));
  expect(curls, 'curl commands in the banner').to.have.length(3);
  const answers = curls.map((c) => {
    const { status, body } = runPrinted(c, env);
    expect(status, `${c}\n${body}`).to.equal(200);
    return JSON.parse(body) as Json;
  });
  const [latest, op, daily] = answers as [{ userOps: Json[] }, Json, Json];
  expect(latest.userOps, 'getLatestUserOps').to.have.length(3);
  const hash = /hash=(0x[0-9a-f]{64})/.exec(curls[1]!)?.[1];
  expect(hash, 'a real op hash in the second curl').to.be.a('string');
  expect(JSON.stringify(op), 'getUserOp answers that op').to.include(hash);
  expect(JSON.stringify(daily), 'getDailyMetrics').to.match(/"userOpsDaily"|"dailyMetrics"/);
}

/** A local receiver for one webhook: resolves with the first delivery's body and headers. */
async function startReceiver(): Promise<{ url: string; delivery: Promise<{ body: string; headers: IncomingHttpHeaders }>; close(): void }> {
  let deliver!: (d: { body: string; headers: IncomingHttpHeaders }) => void;
  const delivery = new Promise<{ body: string; headers: IncomingHttpHeaders }>((resolve) => (deliver = resolve));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.writeHead(204).end();
      deliver({ body, headers: req.headers });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, delivery, close: () => server.close() };
}

describe("the README's two commands, as a newcomer runs them", function () {
  this.timeout(30 * 60_000);
  let dir = '';
  let key = '';

  before(function () {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: .ci/run installs the Debian chromium package`);
    dir = copyTree();
    npmCi(dir);
  });
  after(() => {
    if (dir) removeTree(dir);
  });

  it('npm start: the banner, its curls, the status page and GraphiQL in Chromium, a signed webhook, a quiet log, Ctrl-C stops everything', async () => {
    let firstMinute: string[] = [];
    await withStart(dir, {}, async (run, banner) => {
      const bannerAt = Date.now();
      key = /API key\s+(ops_\S+)/.exec(banner.join('\n'))?.[1] ?? '';
      expect(key, 'a new key in the banner').to.match(/^ops_/);
      checkCurls(banner);

      const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${URL_BASE}/`);
        const ops = page.locator('section[data-network="devnet"] table[data-list="userOps"] tbody tr');
        await ops.first().waitFor({ timeout: 30_000 });
        expect(await ops.count(), 'ops in the status page').to.be.greaterThan(0);
        await page.goto(`${URL_BASE}/subgraphs/name/devnet`);
        await page.locator('.graphiql-container').waitFor({ timeout: 30_000 });
        await page.fill('#key', key);
        // With the key, GraphiQL fills the sample's variables with the newest op's hash.
        await page
          .locator('.graphiql-editor-tool .CodeMirror-code')
          .filter({ hasText: /0x[0-9a-f]{64}/ })
          .waitFor({ timeout: 30_000 });
        expect(errors, 'page errors').to.deep.equal([]);
      } finally {
        await browser.close();
      }

      // A webhook as docs/webhooks.md shows it, for the paymaster of the latest ops, to a local receiver.
      const latest = JSON.parse(
        runPrinted(`curl -H "x-api-key: ${key}" "${URL_BASE}/v0/getLatestUserOps?network=devnet&first=50"`).body,
      ) as {
        userOps: Array<{ paymaster: string }>;
      };
      const paymaster = latest.userOps.map((o) => o.paymaster).find((p) => !/^0x0{40}$/.test(p));
      expect(paymaster, 'a paymaster among the latest ops').to.be.a('string');
      const receiver = await startReceiver();
      try {
        const created = runPrinted(
          `curl -H "x-api-key: ${key}" "${URL_BASE}/v0/createWebhook?webhookUrl=${receiver.url}&filter=PAYMASTER&identifier=${paymaster}&chainId=31337&apiName=my-paymaster"`,
        );
        expect(created.status, created.body).to.equal(200);
        const secret = (JSON.parse(created.body) as { webhook: { secret: string } }).webhook.secret;
        const delivery = await Promise.race([
          receiver.delivery,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no delivery within 120 s')), 120_000)),
        ]);
        const event = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as {
          type: string;
          data: { userOp: { paymaster: string } };
        };
        expect(event.type).to.equal('user_operation');
        expect(event.data.userOp.paymaster).to.equal(paymaster);
      } finally {
        receiver.close();
      }

      await new Promise((r) => setTimeout(r, Math.max(0, bannerAt + QUIET_LOG_MS - Date.now())));
      firstMinute = run.lines();
    });
    // The log through the first minute after the banner (read once npm start has stopped, so a failure
    // here leaves nothing running): at info only what a person acts on (started, listening, the
    // banner, warnings, progress), nothing said again for every batch, tick or request.
    const repeated = repeatedInfoMessages(firstMinute, INFO_REPEATS_ALLOWED);
    expect(
      repeated,
      `info messages said more than ${INFO_REPEATS_ALLOWED} times in the first minute: ${JSON.stringify(repeated)}`,
    ).to.deep.equal({});
  });

  it('a second npm start on the same data: the banner, nothing at error level, the key of the first start still works', async () => {
    expect(key, 'the first start ran').to.match(/^ops_/);
    await withStart(dir, {}, async (_run, banner) => {
      expect(banner.join('\n')).to.not.match(/API key\s+ops_/);
      // The banner's curls name $OPSCAN_API_KEY, which the banner says to export.
      checkCurls(banner, newcomerEnv({ OPSCAN_API_KEY: key }));
    });
  });

  it('DEMO_TRAFFIC=generated on a fresh data folder: the banner and its curls', async () => {
    rmSync(path.join(dir, '.data'), { recursive: true, force: true });
    await withStart(dir, { DEMO_TRAFFIC: 'generated' }, async (_run, banner) => {
      checkCurls(banner);
    });
  });
});
