// The memory browser over a large memory, in headless Chromium: the timeline, a period of it
// and an episode must each be on screen within a second, and a page slow to load must not
// replace one asked for after it. Run by the `ui` tests of
// `cargo test` against a server holding 10,000 episodes (`epimem bench recall --db`).
//
// EPIMEM_UI_BASE      the server
// EPIMEM_UI_SHOTS     where screenshots go (default: target/ui-screenshots)
// EPIMEM_TEST_BROWSER the Chromium to drive (default: /usr/bin/chromium)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const base = process.env.EPIMEM_UI_BASE;
const shots = process.env.EPIMEM_UI_SHOTS || 'target/ui-screenshots';
if (!base) throw new Error('set EPIMEM_UI_BASE');
mkdirSync(shots, { recursive: true });
const LIMIT_MS = 1000;

const browser = await chromium.launch({
  executablePath: process.env.EPIMEM_TEST_BROWSER || '/usr/bin/chromium',
  // As in ui.mjs: root (no sandbox), no network of its own.
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
const timings = {};
const timed = async (name, action, ready) => {
  const started = Date.now();
  await action();
  await ready();
  timings[name] = Date.now() - started;
  await page.screenshot({ path: join(shots, `large-${name}.png`) });
};

try {
  await timed('timeline', () => page.goto(`${base}/ui`), async () => {
    await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
    await page.locator('table tbody tr').first().waitFor();
  });
  const period = page.locator('ul.nodes a').first();
  // Exact names: the timeline's own "Latest episodes" is not the period's "Episodes".
  const heading = (name) => page.getByRole('heading', { name, level: 2, exact: true });
  await timed('period', () => period.click(), () => heading('Within it').or(heading('Episodes')).first().waitFor());
  await page.goto(`${base}/ui#/timeline`);
  await heading('Latest episodes').waitFor();
  await page.locator('table tbody tr').first().waitFor();
  const episode = page.locator('table').getByRole('link').first();
  await timed('episode', () => episode.click(), () => page.getByRole('heading', { name: 'Messages' }).waitFor());

  // A page slow to load does not replace the one asked for after it: the period's nodes are
  // held back 1.5 s while the health page is opened.
  await page.route('**/v1/timeline/*', async (route) => {
    await new Promise((done) => setTimeout(done, 1500));
    await route.continue();
  });
  await page.goto(`${base}/ui#/timeline`);
  await heading('Latest episodes').waitFor();
  await page.locator('ul.nodes a').first().click();
  await page.getByRole('link', { name: 'Health' }).click();
  await heading('Jobs').waitFor();
  await page.waitForTimeout(4000);
  if (await page.getByRole('heading', { name: 'Health', level: 1, exact: true }).count() !== 1) {
    throw new Error('the period, slower to load, replaced the health page asked for after it');
  }
  await page.unroute('**/v1/timeline/*');

  const slow = Object.entries(timings).filter(([, ms]) => ms > LIMIT_MS);
  if (slow.length) throw new Error(`slower than ${LIMIT_MS} ms: ${JSON.stringify(timings)}`);
  console.log(JSON.stringify({ ok: true, ...timings }));
} catch (e) {
  console.error(`load test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
