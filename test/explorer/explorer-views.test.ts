import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser } from '../../dev-tools/browser.ts';
import { useCairn } from '../support/cairn.ts';
import { accessibilityViolations, openExplorer } from '../support/explorer-page.ts';
import { http } from '../support/http.ts';

const BUSY = { timeout: 60_000 };

/**
 * Saved views and embeds from the explorer, in a real Chromium: what the page saves, opens,
 * embeds and revokes is what the API then holds and answers.
 */
describe('saved views in the explorer', () => {
  const cairn = useCairn({ businesses: ['acme'] });
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const isQuery = (r: Request) => new URL(r.url()).pathname === '/api/v1/query';
  const queryOf = (r: Request) => JSON.parse(new URL(r.url()).searchParams.get('q') ?? 'null');

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await openExplorer(browser.context, cairn.url, problems);
    await page.getByLabel('Token').fill(cairn.auth.Authorization.replace('Bearer ', ''));
    await page.getByLabel('Token').press('Enter');
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('saves the query on screen as a view, and opens it again into the form', async () => {
    const shown = queryOf(
      await (async () => {
        const ran = page.waitForRequest(isQuery, BUSY);
        await page.getByRole('button', { name: 'Run', exact: true }).click();
        return ran;
      })(),
    );
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    await page.getByRole('button', { name: 'Save view' }).click();
    await expect.poll(() => page.locator('#views-status').textContent()).toContain('a name');
    await page.getByLabel('Save the query as').fill('Open work');
    await page.getByRole('button', { name: 'Save view' }).click();
    await expect
      .poll(() => page.locator('#views-status').textContent(), BUSY)
      .toBe('Saved as “Open work”.');
    const listed = await http(cairn.url, 'GET', '/api/v1/views', { headers: cairn.auth });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ name: 'Open work' });
    expect(listed.body.data[0].query).toMatchObject(shown);

    // Another query on screen; opening the view brings its own back and runs it.
    await page.getByLabel('Period', { exact: true }).selectOption('last_7_days');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    const reopened = page.waitForRequest(isQuery, BUSY);
    await page.getByRole('button', { name: 'Open Open work', exact: true }).click();
    expect(queryOf(await reopened)).toMatchObject(shown);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('creates an embed with its iframe snippet, lists it, and revokes it', async () => {
    await page.getByRole('button', { name: 'Embed Open work', exact: true }).click();
    await page.getByLabel('Pages that may frame it').fill('https://intranet.example.com');
    await page.getByRole('button', { name: 'Create embed' }).click();
    await expect
      .poll(() => page.locator('#embed-snippet').textContent(), BUSY)
      .toContain('<iframe');
    const snippet = (await page.locator('#embed-snippet').textContent()) ?? '';
    const src = /src="([^"]+)"/.exec(snippet)?.[1] ?? '';
    expect(src.startsWith(`${cairn.url}/embed/`)).toBe(true);
    const answer = await fetch(`${src}/answer`);
    expect(answer.status).toBe(200);
    expect((await fetch(src)).headers.get('content-security-policy')).toContain(
      'frame-ancestors https://intranet.example.com',
    );
    await expect
      .poll(() => page.locator('#embeds-list li[data-state="active"]').count(), BUSY)
      .toBe(1);
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.locator('#embeds-list li[data-state="active"] button').click();
    await expect
      .poll(() => page.locator('#embeds-list li[data-state="revoked"]').count(), BUSY)
      .toBe(1);
    expect((await fetch(`${src}/answer`)).status).toBe(401);
    expect(problems).toEqual([]);
  });

  it('says what a token without analytics:write lacks, and saves nothing', async () => {
    const reader = await cairn.token({ businesses: ['acme'], scopes: ['analytics:read'] });
    const other = await openExplorer(browser.context, cairn.url, problems);
    try {
      await other.getByLabel('Token').fill(reader.Authorization.replace('Bearer ', ''));
      await other.getByLabel('Token').press('Enter');
      await other.locator('#results[data-state="done"]').waitFor(BUSY);
      await other.getByLabel('Save the query as').fill('Not allowed');
      await other.getByRole('button', { name: 'Save view' }).click();
      await expect
        .poll(() => other.locator('#views-status').textContent(), BUSY)
        .toContain('needs analytics:write');
      const listed = await http(cairn.url, 'GET', '/api/v1/views', { headers: cairn.auth });
      expect(listed.body.data.map((v: { name: string }) => v.name)).toEqual(['Open work']);
    } finally {
      await other.close();
    }
  });
});
