import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it); without it outside CI a browser test is skipped. */
export const CHROMIUM = '/usr/bin/chromium';

/** Without the background-networking flags Chromium's own connections fail on a closed network. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Runs `use` with headless Chromium on a fresh profile, closed and removed afterwards; skips the test
 * when Chromium is not installed (and fails it in CI, where it must be).
 */
export async function withChromium(
  test: Mocha.Context,
  viewport: { width: number; height: number },
  use: (browser: BrowserContext) => Promise<void>,
): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs the Debian chromium package`);
    test.skip();
  }
  const profile = mkdtempSync(join(tmpdir(), 'opscan-chromium-'));
  // A fresh profile per run (playwright passes it as --user-data-dir).
  const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_FLAGS, viewport });
  try {
    await use(browser);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
