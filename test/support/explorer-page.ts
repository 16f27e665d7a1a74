import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, Page } from 'playwright-core';

/** axe-core's engine, run inside the page (by evaluation: the page's CSP allows no inline script). */
const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/**
 * axe-core's violations on the page as it is now, one line per element at fault. Its default
 * rules, and one it still calls experimental: a control's accessible name contains its visible
 * text, so a person using speech input can name what they see.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'], rules: { 'label-content-name-mismatch': { enabled: true } } }).then((r) => r.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary) })))",
  )) as Array<{ id: string; help: string; nodes: string[] }>;
  return violations.flatMap((v) => v.nodes.map((node) => `${v.id} (${v.help}) at ${node}`));
}

/**
 * A new tab of `browser` on the explorer at `url`, at 1366 × 900, whose script errors and
 * console errors land in `problems` (Chromium reports every 4xx answer as a failed resource;
 * the tests provoke some, so those are left out).
 */
export async function openExplorer(
  context: BrowserContext,
  url: string,
  problems: string[],
): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 900 });
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page: ${error.message}`));
  await page.goto(`${url}/explore`);
  return page;
}
