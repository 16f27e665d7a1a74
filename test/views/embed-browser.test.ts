import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser } from '../../dev-tools/browser.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

/** A page of another site that frames `src`: what an intranet embedding a chart serves. */
async function framingSite(src: () => string): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><html lang="en"><head><title>Intranet</title></head><body>` +
        `<h1>Our dashboard</h1><iframe id="chart" title="chart" src="${src()}" width="900" height="700"></iframe>` +
        `</body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The embed's frame of `page`, once its document has loaded (or failed to). */
async function embedFrame(page: Page): Promise<Frame> {
  const handle = await page.waitForSelector('#chart');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('the iframe has no frame');
  await frame.waitForLoadState('load');
  return frame;
}

describe('an embed page inside an iframe, in Chromium', () => {
  const cairn = useCairn({
    businesses: ['acme'],
    scopes: ['analytics:read', 'analytics:write', 'workflows:write'],
  });
  let browser: Browser;
  let allowed: Awaited<ReturnType<typeof framingSite>>;
  let refused: Awaited<ReturnType<typeof framingSite>>;
  let embedUrl = '';

  beforeAll(async () => {
    for (const project of ['alpha', 'alpha', 'beta']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: cairn.auth,
        body: { business: 'acme', name: `Task in ${project}`, project },
      });
      expect(res.status).toBe(201);
    }
    await waitFor(
      async () => {
        const res = await http(cairn.url, 'POST', '/api/v1/query', {
          headers: cairn.auth,
          body: { metrics: ['tasks_created'], period: 'last_7_days' },
        });
        return res.body.data[0]?.tasks_created === 3;
      },
      { timeoutMs: 60_000 },
    );
    allowed = await framingSite(() => embedUrl);
    refused = await framingSite(() => embedUrl);
    const view = await http(cairn.url, 'POST', '/api/v1/views', {
      headers: cairn.auth,
      body: {
        name: 'Tasks by project',
        query: { metrics: ['tasks_created'], dimensions: ['project'], period: 'last_7_days' },
      },
    });
    expect(view.status).toBe(201);
    const embed = await http(cairn.url, 'POST', `/api/v1/views/${view.body.data.id}/embeds`, {
      headers: cairn.auth,
      body: {
        expires_in_days: 7,
        locked_filters: [{ dimension: 'project', op: 'eq', values: ['alpha'] }],
        // The same machine under another name is another origin: localhost is not 127.0.0.1.
        allowed_origins: [`http://127.0.0.1:${allowed.port}`],
      },
    });
    expect(embed.status).toBe(201);
    embedUrl = `${cairn.url}${embed.body.data.url}`;
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await allowed?.close();
    await refused?.close();
  });

  it('draws the chart and table of the locked answer from an allowed origin, asking nothing of any other origin', async () => {
    const page = await browser.context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    try {
      await page.goto(`http://127.0.0.1:${allowed.port}/`);
      const frame = await embedFrame(page);
      await frame.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
      const labels = await frame.$$eval('td[data-column="project"]', (cells) =>
        cells.map((cell) => JSON.parse(cell.getAttribute('data-value') ?? 'null')),
      );
      expect(labels).toEqual(['alpha']);
      const counts = await frame.$$eval('td[data-column="tasks_created"]', (cells) =>
        cells.map((cell) => JSON.parse(cell.getAttribute('data-value') ?? 'null')),
      );
      expect(counts).toEqual([2]);
      expect(await frame.$$('.plot')).not.toHaveLength(0);
      expect(await frame.textContent('#status')).toBe('1 row.');
      // The parent's page, then the embed's own origin only; its one API call is ./answer.
      const embedOrigin = new URL(cairn.url).origin;
      const elsewhere = requests.filter(
        (url) => !url.startsWith(embedOrigin) && url !== `http://127.0.0.1:${allowed.port}/`,
      );
      expect(elsewhere).toEqual([]);
      const calls = requests.filter(
        (url) => url.startsWith(embedOrigin) && !url.includes('/explore/assets/'),
      );
      expect(calls).toEqual([embedUrl, `${embedUrl}/answer`]);
    } finally {
      await page.close();
    }
  });

  it('is not shown inside a page of an origin the embed does not allow', async () => {
    const page = await browser.context.newPage();
    const answers: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/answer')) answers.push(request.url());
    });
    try {
      await page.goto(`http://localhost:${refused.port}/`);
      const frame = await embedFrame(page);
      // Chromium replaces a document its frame-ancestors refuse with an error page.
      expect(await frame.$('body.embed')).toBeNull();
      expect(await frame.$('#status')).toBeNull();
      expect(answers).toEqual([]);
      // The same page opened on its own (not framed) is served and draws.
      await page.goto(embedUrl);
      await page.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
      expect(answers).toEqual([`${embedUrl}/answer`]);
    } finally {
      await page.close();
    }
  });
});
