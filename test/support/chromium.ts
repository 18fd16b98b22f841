import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './effectd-harness.js';

/** Debian's chromium (scripts/ensure-debian-package.sh installs it); playwright-core never downloads a browser here. */
export const CHROMIUM = process.env.EFFECTD_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A headless Chromium on a fresh profile; close() removes nothing but the browser. */
export async function launchChromium(viewport = { width: 1440, height: 960 }): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (npm test does it: scripts/ensure-debian-package.sh)`);
  return chromium.launchPersistentContext(tempDir('effectd-chromium-'), { executablePath: CHROMIUM, headless: true, args: ARGS, viewport, deviceScaleFactor: 1 });
}

/**
 * A screenshot into test-artifacts/<name>.png; one docs/watching.md shows (`docs: true`) is also
 * written to docs/<name>.png with UPDATE_DOCS=1 (committed; an ordinary run leaves the tree as it was).
 */
export async function screenshot(page: Page, name: string, options: { docs?: boolean; fullPage?: boolean } = {}): Promise<void> {
  mkdirSync('test-artifacts', { recursive: true });
  const png = await page.screenshot({ path: `test-artifacts/${name}.png`, fullPage: options.fullPage ?? false });
  if (options.docs && process.env.UPDATE_DOCS === '1') writeFileSync(`docs/${name}.png`, png);
}
