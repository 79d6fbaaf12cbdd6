import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import * as apiKeyUsage from '../../shared/db/tables/apiKeyUsage.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import { createLogger } from '../../shared/log.js';
import { closeServer, startWeb } from '../../server/web.js';
import { createTestKey, testConfig } from '../helpers/app.js';
import { withChromium } from '../helpers/chromium.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

export const SCREENSHOT = join(tmpdir(), 'opscan-status-page.png');

/** A status-page table as laid out in the browser: its scroll box and every cell shown. */
type TableLayout = {
  list: string;
  /** The page's own scroll width. */
  page: number;
  box: { left: number; right: number; clientWidth: number; scrollWidth: number };
  /** `label`: the cell's column (its data-label; a header cell's own text). */
  cells: Array<{ text: string; label: string; left: number; right: number; clientWidth: number; scrollWidth: number }>;
};
const ADMIN_TOKEN = 'status-page-admin-token-0123456789abcdef';

describe('status page at /', function () {
  this.timeout(300_000);
  const t = useIndexedDevnet({ ops: 40, days: 3 });
  let server: Server;
  let base = '';

  /**
   * What the page says of a sender, from the truth: the devnet's SimpleAccounts (npm builds) are
   * named from the chain; its MiniAccounts are no implementation opscan knows, so the page falls
   * back to the family their method suggests (MiniAccount shares SimpleAccount's execute/executeBatch).
   */
  const accountColumn = (sender: string): string => {
    const factory = t.truth.accounts.find((a) => a.address === sender)?.factory;
    const name = Object.entries(t.truth.contracts).find(([, address]) => address === factory)?.[0] ?? '';
    const simple = /^simpleAccountFactory\.(v0\.\d)$/.exec(name);
    return simple ? `SimpleAccount ${simple[1]}` : 'SimpleAccount-style';
  };

  before(async () => {
    server = await startWeb(
      {
        db: t.db,
        config: testConfig({ RATE_LIMIT_PER_SECOND: '1000', ADMIN_TOKEN }),
        log: createLogger({ level: 'silent', name: 'status' }),
      },
      0,
    );
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (server) await closeServer(server);
  });

  it('reads a keyless, rate-limited summary: position, latest ops and bundles, 30 days of metrics', async () => {
    const res = await request(base).get('/v0/getStatusSummary');
    expect(res.status).to.equal(200);
    expect(res.headers).to.have.property('ratelimit-policy');
    const [devnet] = res.body.networks;
    const state = (await indexerState.find(t.db, devnet.chainId))!;
    expect(devnet).to.include({
      network: 'devnet',
      indexedBlock: state.indexedBlock,
      headBlock: state.headBlock,
      backfillComplete: true,
      backfillProgress: 1,
    });
    const latest = [...t.truth.userOps].sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex)[0]!;
    expect(devnet.latestUserOps[0].userOpHash).to.equal(latest.userOpHash);
    expect(devnet.latestUserOps).to.have.length(8);
    expect(devnet.latestBundles[0].transactionHash).to.equal(latest.transactionHash);
    const ops = devnet.dailyMetrics.reduce((sum: number, d: { userOpsDaily: string }) => sum + Number(d.userOpsDaily), 0);
    expect(ops).to.equal(t.truth.userOps.length);
    expect(Object.keys(devnet.latestUserOps[0]).sort()).to.deep.equal([
      'account',
      'actualGasCost',
      'blockNumber',
      'blockTime',
      'entryPointVersion',
      'failure',
      'implementation',
      'sender',
      'success',
      'userOpHash',
    ]);
    // A failed op's failure in words; none for one that succeeded.
    for (const op of devnet.latestUserOps as Array<{ success: boolean; failure: string | null }>)
      expect(op.failure === null, JSON.stringify(op)).to.equal(op.success);
    expect(devnet.latestUserOps[0].account).to.equal(accountColumn(latest.sender));
    expect(devnet.latestUserOps[0].entryPointVersion).to.equal(latest.entryPointVersion);
  });

  it('serves the page, its script and the charting library from this process', async () => {
    const page = await request(base).get('/');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/text\/html/);
    expect(page.text).to.include('/status/uPlot.iife.min.js').and.include('/status/app.js');
    for (const file of ['/status/app.js', '/status/style.css', '/status/uPlot.iife.min.js', '/status/uPlot.min.css']) {
      expect((await request(base).get(file)).status, file).to.equal(200);
    }
  });

  it('has a favicon: linked from the page and at /favicon.ico', async () => {
    const page = await request(base).get('/');
    const href = /<link rel="icon"[^>]* href="([^"]+)"/.exec(page.text)?.[1];
    expect(href).to.equal('/status/favicon.svg');
    for (const path of [href!, '/favicon.ico']) {
      const icon = await request(base).get(path).buffer(true);
      expect([icon.status, icon.headers['content-type']], path).to.deep.equal([200, 'image/svg+xml']);
      expect(String(icon.body), path).to.match(/^<svg /);
    }
  });

  it('shows the data in headless Chromium (screenshot saved)', async function () {
    await withChromium(this, { width: 1100, height: 1400 }, async (browser) => {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      // Every file the page asks for (the favicon among them) is there, and nothing fails on the server
      // (the wrong admin token below is a deliberate 401).
      const failed: string[] = [];
      page.on('response', (r) => {
        if (r.status() === 404 || r.status() >= 500) failed.push(`${r.status()} ${r.url()}`);
      });
      page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`));
      await page.goto(`${base}/`);
      // Without the admin token: the operator's form, no usage chart.
      await page.locator('#admin-form').waitFor({ timeout: 30_000 });
      expect(await page.locator('#usage').isHidden()).to.equal(true);
      expect(await page.locator('#usage-chart canvas').count()).to.equal(0);
      const section = page.locator('section[data-network="devnet"]');
      await section.locator('table[data-list="userOps"] tbody tr').first().waitFor({ timeout: 30_000 });
      await section.locator('.chart canvas').first().waitFor({ timeout: 30_000 });

      const state = (await indexerState.find(t.db, 31337))!;
      expect(await section.locator('[data-field="indexed"] dd').textContent()).to.equal(state.indexedBlock.toLocaleString('en-US'));
      expect(await section.locator('[data-field="lag"] dd').textContent()).to.equal('0 blocks');
      expect(await section.locator('[data-field="backfill"] dd').textContent()).to.equal('complete');
      expect(await section.locator('table[data-list="userOps"] tbody tr').count()).to.equal(8);
      expect(await section.locator('table[data-list="bundles"] tbody tr').count()).to.be.greaterThan(0);
      const latest = [...t.truth.userOps].sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex)[0]!;
      const href = await section.locator('table[data-list="userOps"] tbody tr a').first().getAttribute('href');
      expect(href).to.equal(`/v0/getUserOp?network=devnet&hash=${latest.userOpHash}`);
      expect(await section.locator('table[data-list="userOps"] tbody tr [data-field="account"]').first().textContent()).to.equal(
        `${accountColumn(latest.sender)} · EntryPoint ${latest.entryPointVersion}`,
      );
      // The chart's legend names the three series.
      const legend = await section.locator('.u-legend').textContent();
      expect(legend).to.include('user ops').and.include('active wallets').and.include('gas collected');
      for (const link of ['/docs', '/v0/openapi.json', '/subgraphs/name/devnet']) {
        expect(await page.locator(`nav a[href="${link}"]`).count(), link).to.equal(1);
      }
      // Both tables whole in a 1,400 px window and on a 400 px phone: no table wider than its scroll box,
      // every cell inside its box and the window, no cell's text cut; the page itself never wider than
      // the window. On the phone a row is a card of labelled lines.
      for (const width of [1400, 400]) {
        await page.setViewportSize({ width, height: 1400 });
        // The chart is redrawn at the new width by the page's resize handler: wait for it rather than race it.
        await page
          .waitForFunction(`document.documentElement.scrollWidth <= ${width}`, undefined, { timeout: 10_000 })
          .catch(() => undefined);
        // Evaluated in the page (a string: the test's own types have no DOM).
        const tables = await page.evaluate<
          TableLayout[]
        >(`[...document.querySelectorAll('section[data-network="devnet"] table[data-list]')].map((table) => {
          const box = table.closest('.scroll');
          const rect = (e) => e.getBoundingClientRect();
          const visible = (e) => rect(e).width > 1 && rect(e).height > 1;
          return {
            list: table.dataset.list,
            page: document.documentElement.scrollWidth,
            box: { left: rect(box).left, right: rect(box).right, clientWidth: box.clientWidth, scrollWidth: box.scrollWidth },
            cells: [...table.querySelectorAll('th, td')].filter(visible).map((c) => ({
              text: c.textContent,
              label: c.dataset.label ?? c.textContent,
              left: rect(c).left,
              right: rect(c).right,
              clientWidth: c.clientWidth,
              scrollWidth: c.scrollWidth,
            })),
          };
        })`);
        expect(tables.map((t) => t.list)).to.deep.equal(['userOps', 'bundles']);
        for (const t of tables) {
          expect(t.page, `at ${width} px the page`).to.be.at.most(width);
          expect(t.box.scrollWidth, `at ${width} px the ${t.list} table is wider than its box`).to.be.at.most(t.box.clientWidth);
          const lastColumn = t.list === 'userOps' ? 'result' : 'when';
          expect(
            t.cells.map((c) => c.label),
            `at ${width} px, ${t.list}: its last column shown`,
          ).to.include(lastColumn);
          for (const c of t.cells) {
            const where = `at ${width} px, ${t.list}, ${c.label}: "${c.text}"`;
            expect(c.left, `${where} starts inside its box`).to.be.at.least(t.box.left - 0.5);
            expect(c.right, `${where} ends inside its box (${t.box.right})`).to.be.at.most(t.box.right + 0.5);
            expect(c.right, `${where} ends inside the window`).to.be.at.most(width);
            expect(c.scrollWidth, `${where} is cut`).to.be.at.most(c.clientWidth);
          }
        }
        await page.screenshot({ path: join(tmpdir(), `opscan-status-page-${width}.png`), fullPage: true });
      }
      // On the phone the ops table's header row is not shown: each cell names its column.
      await page.setViewportSize({ width: 400, height: 1400 });
      const firstOp = section.locator('table[data-list="userOps"] tbody tr').first();
      expect(await firstOp.locator('td').evaluateAll((tds) => tds.map((td) => td.getAttribute('data-label')))).to.deep.equal([
        'user op',
        'sender',
        'account',
        'block',
        'when',
        'result',
      ]);
      expect(await page.locator('link[rel="icon"]').count()).to.equal(1);
      await page.setViewportSize({ width: 1100, height: 1400 });

      // A wrong token is refused and forgotten; the right one shows requests per hour of the busiest keys.
      await page.fill('#admin-token', 'not-the-admin-token-at-all-0123456789');
      await page.click('#admin-form button[type="submit"]');
      await page.locator('#usage-error').waitFor({ state: 'visible', timeout: 10_000 });
      expect(await page.locator('#usage-error').textContent()).to.include('refused');
      expect(await page.locator('#usage-chart canvas').count()).to.equal(0);
      const key = await createTestKey(t.db, 'chart-key');
      const stored = (await apiKeys.findByPrefix(t.db, key.slice(0, 12)))!;
      const thisHour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
      await apiKeyUsage.addCounts(t.db, [
        { apiKeyId: stored.id, hour: thisHour, endpoint: 'getUserOp', network: 'devnet', statusClass: 2, requests: 12 },
        {
          apiKeyId: stored.id,
          hour: new Date(thisHour.getTime() - 3_600_000),
          endpoint: 'getUserOp',
          network: 'devnet',
          statusClass: 2,
          requests: 7,
        },
      ]);
      await page.fill('#admin-token', ADMIN_TOKEN);
      await page.click('#admin-form button[type="submit"]');
      await page.locator('#usage-chart canvas').first().waitFor({ timeout: 10_000 });
      expect(await page.locator('#usage .u-legend').textContent()).to.include('chart-key');
      expect(await page.evaluate(`window.sessionStorage.getItem('opscanAdminToken')`)).to.equal(ADMIN_TOKEN);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      console.log(`      screenshot: ${SCREENSHOT}`);
      expect(errors).to.deep.equal([]);
      expect(failed).to.deep.equal([]);
      // Forgetting the token removes the chart.
      await page.click('#admin-forget');
      expect(await page.locator('#usage-chart canvas').count()).to.equal(0);
      expect(await page.locator('#usage').isHidden()).to.equal(true);
    });
  });
});
