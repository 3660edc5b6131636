// The memory browser end to end, in headless Chromium: the timeline, the keyboard, an
// episode, correcting its title, a search, and forgetting the episode. Run by the `ui` test of `cargo test` against a
// server it filled; usable alone too:
//
//   EPIMEM_UI_BASE=http://127.0.0.1:7878 EPIMEM_UI_TOPIC=Lisbon node ui-tests/ui.mjs
//
// EPIMEM_UI_BASE     the server
// EPIMEM_UI_TOPIC    a word in the title of one of its episodes (that episode is opened,
//                    searched for and forgotten)
// EPIMEM_UI_SHOTS    where screenshots go (default: target/ui-screenshots)
// EPIMEM_TEST_BROWSER the Chromium to drive (default: /usr/bin/chromium)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const base = process.env.EPIMEM_UI_BASE;
const topic = process.env.EPIMEM_UI_TOPIC;
const shots = process.env.EPIMEM_UI_SHOTS || 'target/ui-screenshots';
if (!base || !topic) throw new Error('set EPIMEM_UI_BASE and EPIMEM_UI_TOPIC');
mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.EPIMEM_TEST_BROWSER || '/usr/bin/chromium',
  // Chromium's sandbox refuses to start as root, as CI runs; and on a machine without a
  // network, its own background connections only fail, so none are made.
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});
const errors = [];
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
page.on('pageerror', (e) => errors.push(e.message));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('response', (r) => { if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`); });
const expect = (ok, what) => { if (!ok) throw new Error(what); };
const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
const timings = {};

try {
  // The timeline: every episode on the axis and in the table.
  let started = Date.now();
  await page.goto(`${base}/ui`);
  await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
  await page.locator('table tbody tr').first().waitFor();
  timings.timeline_ms = Date.now() - started;
  const rows = await page.locator('table tbody tr').count();
  const dots = await page.locator('svg.axis circle').count();
  expect(rows > 1 && rows === dots, `timeline: ${rows} rows, ${dots} dots`);
  await shot('timeline');

  // Text is readable: every text element on the page has a contrast of at least 4.5:1
  // against the background it is drawn on (WCAG AA for normal text).
  const poor = await page.evaluate(() => {
    const rgb = (c) => (c.match(/[\d.]+/g) || []).slice(0, 4).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    }).reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
    const background = (node) => {
      for (let n = node; n; n = n.parentElement) {
        const c = rgb(getComputedStyle(n).backgroundColor);
        if (c.length < 4 || c[3] > 0) return c;
      }
      return [255, 255, 255];
    };
    const out = [];
    for (const node of document.querySelectorAll('body *')) {
      if (!node.childNodes.length || ![...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim())) continue;
      if (node.closest('svg')) continue;
      const [l1, l2] = [lum(rgb(getComputedStyle(node).color)), lum(background(node))];
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      if (ratio < 4.5) out.push(`${node.tagName} "${node.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return out;
  });
  expect(poor.length === 0, `text below 4.5:1 contrast: ${poor.join('; ')}`);

  // Each view takes the focus to its content (for screen readers), and the keyboard alone
  // opens an episode: Tab to its link, Enter.
  const focusedId = await page.evaluate(() => document.activeElement.id);
  expect(focusedId === 'main', `after a view is shown the focus is on ${focusedId}`);
  const link = page.locator('table').getByRole('link', { name: new RegExp(topic, 'i') }).first();
  const title = await link.textContent();
  let tabs = 0;
  while ((await page.evaluate(() => document.activeElement.textContent)) !== title) {
    expect(++tabs < 60, `no tab stop reaches "${title}"`);
    await page.keyboard.press('Tab');
  }
  started = Date.now();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: title, level: 1 }).waitFor();
  timings.episode_ms = Date.now() - started;
  await page.getByText('Cut and told by').waitFor();
  await page.getByRole('img', { name: /Probability of recall/ }).waitFor();
  expect(await page.locator('ol.messages li').count() > 0, 'the episode shows no messages');
  await shot('episode');

  // A correction: a new title is saved, the old kept as a version.
  const renamed = `${title} getaway`;
  await page.getByLabel('Title').fill(renamed);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: renamed, level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Earlier versions' }).waitFor();
  expect(await page.locator('ol li strong').first().textContent() === title, 'the old title is not kept');
  await shot('edited');

  // A search: the episode comes first under its new title, found by its words, and the
  // context block is as an agent would receive it (the lines that bear on the query). (That the new title's own words find it
  // is the engine's test: with the tests' hashed vectors, one rare word of a title can tie
  // with a vector match.)
  await page.getByRole('link', { name: 'Search' }).click();
  await page.getByLabel('Query').fill(`${topic} castle`);
  await page.getByLabel('Context budget').selectOption('500');
  started = Date.now();
  await page.getByRole('button', { name: 'Recall' }).click();
  await page.getByRole('heading', { name: /The context an agent receives/ }).waitFor();
  timings.search_ms = Date.now() - started;
  const first = await page.locator('table tbody tr').first().textContent();
  expect(first.includes(renamed), `search: the first hit is not "${renamed}": ${first}`);
  expect(first.includes('words #1'), `search: the first hit was not found by its words: ${first}`);
  const context = await page.getByLabel('Context block').textContent();
  expect(context.toLowerCase().includes(topic.toLowerCase()), `the context block lacks ${topic}`);
  await shot('search');
  // A question the memory knows nothing of gets an empty block that says so.
  await page.getByLabel('Query').fill('How do I configure the Kubernetes ingress controller?');
  await page.getByRole('button', { name: 'Recall' }).click();
  await page.getByText('Nothing remembered bears on this.').waitFor();

  // The health page lists the jobs.
  await page.getByRole('link', { name: 'Health' }).click();
  await page.getByRole('heading', { name: 'Jobs' }).waitFor();
  await shot('health');

  // Forgetting the episode takes it off the timeline.
  await page.goto(`${base}/ui#/timeline`);
  await page.locator('table').getByRole('link', { name: renamed }).first().click();
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Forget this episode' }).click();
  await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
  await page.locator('table tbody tr').first().waitFor();
  expect(await page.locator('table tbody tr').count() === rows - 1, 'the episode is still listed');
  expect(await page.getByRole('link', { name: renamed }).count() === 0, 'its link is still there');
  await shot('forgotten');

  expect(errors.length === 0, `the page logged errors: ${errors.join('; ')}`);
  console.log(JSON.stringify({ ok: true, episodes: rows, forgotten: renamed, ...timings }));
} catch (e) {
  await shot('failure').catch(() => {});
  console.error(`ui test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
