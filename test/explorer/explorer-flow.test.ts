import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../apps/server/first-start-dataset.ts';
import { type Browser, launchBrowser } from '../../dev-tools/browser.ts';
import { projectionFreshness } from '../../libs/projection/projection-freshness.ts';
import { wakeProjector } from '../../libs/projection/projector-jobs.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { accessibilityViolations, openExplorer } from '../support/explorer-page.ts';
import { http } from '../support/http.ts';

const BUSY = { timeout: 60_000 };
const SHOTS = path.resolve('reports', 'explorer-screenshots');
const PHONE = { width: 390, height: 844 };
const ZONE = 'Europe/Berlin';

/**
 * The explorer's flow view in a real Chromium, against the demo dataset plus a chain of
 * dependencies: every figure it draws or lists is the API's own answer to the same question.
 */
describe('the flow view in Chromium', () => {
  const cairn = useCairn({ businesses: ['acme', 'globex', 'initech'] });
  let browser: Browser;
  let page: Page;
  let hub: string;
  const problems: string[] = [];
  const api = (method: string, url: string, body?: unknown) =>
    http(cairn.url, method, url, { headers: cairn.auth, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    browser = await launchBrowser({ timezoneId: ZONE, locale: 'en-US' });
    fs.mkdirSync(SHOTS, { recursive: true });
    const now = new Date();
    await loadDemoDataset(
      { db: cairn.db, now: () => now, wakeProjector: wakeProjector(cairn.engines.queue) },
      now,
    );
    // A hub four open tasks wait on (three directly, one through another).
    const create = async (name: string) =>
      (await api('POST', '/api/v1/tasks', { business: 'acme', name, project: 'website' })).body.data
        .gid as string;
    hub = await create('Flow hub');
    const direct: string[] = [];
    for (const name of ['Waits A', 'Waits B', 'Waits C']) {
      const gid = await create(name);
      expect(
        (await api('POST', `/api/v1/tasks/${gid}/dependencies`, { dependencies: [hub] })).status,
      ).toBe(200);
      direct.push(gid);
    }
    const far = await create('Waits further');
    await api('POST', `/api/v1/tasks/${far}/dependencies`, { dependencies: [direct[0]] });
    await waitFor(async () => (await projectionFreshness(cairn.db, new Date())).lagMs === 0, {
      timeoutMs: 60_000,
    });

    page = await openExplorer(browser.context, cairn.url, problems);
    await page.getByLabel('Token').fill(cairn.auth.Authorization.replace('Bearer ', ''));
    await page.getByLabel('Token').press('Enter');
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    await page.locator('#flow-business').selectOption('acme');
    await page.getByRole('button', { name: 'Show flow' }).click();
    await page.locator('#flow-form[data-state="done"]').waitFor(BUSY);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
  });

  const query = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/api/v1/query', {
      business: 'acme',
      period: 'last_90_days',
      timezone: ZONE,
      ...body,
    });
    expect(res.status).toBe(200);
    return res.body as { data: Array<Record<string, unknown>> };
  };

  it('draws a cumulative flow diagram whose bands are the API’s counts', async () => {
    const answer = await query({ metrics: ['tasks_in_status'], dimensions: ['day', 'status'] });
    expect(answer.data.length).toBeGreaterThan(0);
    const table = await page.$$eval('#cfd-table tr', (rows) =>
      rows.map((row) => [...row.children].map((cell) => cell.textContent ?? '')),
    );
    const [header, ...body] = table;
    const last = body.at(-1) ?? [];
    const lastDay = answer.data
      .map((row) => String(row.day))
      .sort()
      .at(-1);
    // Every status as counted at the last day's end, closed ones included.
    const words: Record<string, string> = {
      completed: 'Completed',
      cancelled: 'Cancelled',
      in_progress: 'In progress',
      open: 'Open',
    };
    const expected: Record<string, number> = {};
    for (const row of answer.data) {
      if (row.day !== lastDay) continue;
      expected[words[String(row.status)] ?? String(row.status)] = Number(row.tasks_in_status);
    }
    expect(expected.Completed).toBeGreaterThan(0);
    expect(expected.Open).toBeGreaterThan(0);
    for (const [band, value] of Object.entries(expected)) {
      const column = header!.indexOf(band);
      expect(column, band).toBeGreaterThan(0);
      expect(Number(last[column]), band).toBe(value);
    }
    // The top band is the whole.
    const drawn = (await page.evaluate(
      "document.getElementById('cfd-canvas').plots[0].data[1].at(-1)",
    )) as number;
    expect(drawn).toBe(Object.values(expected).reduce((sum, n) => sum + n, 0));
    expect(await page.locator('#cfd-canvas .u-wrap[role="img"]').count()).toBe(1);
  });

  it('draws the cycle-time percentiles and the age of open work as the API answers them', async () => {
    for (const [canvas, metrics] of [
      ['cycle-canvas', ['p50_cycle_time_hours', 'p85_cycle_time_hours', 'p95_cycle_time_hours']],
      ['aging-canvas', ['avg_age_hours', 'p85_age_hours']],
    ] as const) {
      const answer = await query({ metrics: [...metrics], dimensions: ['week'] });
      const series = (await page.evaluate(
        `document.getElementById('${canvas}').plots.flatMap((p) => p.series.slice(1).map((s, i) => ({ label: s.label, values: p.data[i + 1] })))`,
      )) as Array<{ label: string; values: Array<number | null> }>;
      // A line and its dotted end (the week not over yet) are one metric's values.
      const lines = new Map<string, Array<number | null>>();
      for (const { label, values } of series) {
        const name = label.replace(/ \(incomplete\)$/, '');
        const held = lines.get(name) ?? values.map(() => null);
        lines.set(
          name,
          held.map((v, i) => v ?? values[i] ?? null),
        );
      }
      const drawn = [...lines.values()].map((values) => values.filter((v) => v !== null));
      expect(drawn.length).toBe(metrics.length);
      for (const metric of metrics) {
        const values = answer.data.map((row) => row[metric]).filter((v) => v !== null);
        expect(drawn).toContainEqual(values);
      }
    }
  });

  it('lists the bottlenecks in the API’s order, and opens one in the dependents browser', async () => {
    const ranked = await api('GET', '/api/v1/businesses/acme/bottlenecks?limit=10');
    const holding = (ranked.body.data as Array<{ gid: string; blocked_count: number }>).filter(
      (t) => t.blocked_count > 0,
    );
    expect(holding[0]).toMatchObject({ gid: hub, blocked_count: 4 });
    const listed = await page.$$eval('#bottlenecks-list li', (items) =>
      items.map((li) => ({
        gid: li.getAttribute('data-gid'),
        blocked: Number(li.getAttribute('data-blocked')),
      })),
    );
    expect(listed).toEqual(holding.map((t) => ({ gid: t.gid, blocked: t.blocked_count })));
    await page.getByRole('button', { name: 'Dependents of Flow hub' }).click();
    await expect
      .poll(() => page.$$eval('#dependents-list li', (items) => items.length), BUSY)
      .toBe(3);
    expect(await page.inputValue('#task-gid')).toBe(hub);
  });

  it('shows the forecast’s three dates, the same as the API’s with the same seed', async () => {
    const res = await api('POST', '/api/v1/forecast', {
      business: 'acme',
      history: 'last_90_days',
      timezone: ZONE,
      seed: 1,
    });
    expect(res.status).toBe(200);
    const { open_tasks, completion } = res.body.data;
    const shown = await page.$$eval('#forecast-list div', (items) =>
      Object.fromEntries(
        items.map((d) => [d.getAttribute('data-term'), d.querySelector('dd')?.textContent]),
      ),
    );
    expect(shown.open).toBe(String(open_tasks));
    const day = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
    for (const key of ['p50', 'p85', 'p95'] as const) {
      const date = completion[key] as string | null;
      expect(shown[key]).toBe(
        date ? day.format(new Date(`${date}T00:00:00Z`)) : 'not within five years',
      );
    }
  });

  it('passes axe-core at both widths and logged no errors', async () => {
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.locator('#flow').screenshot({ path: path.join(SHOTS, 'flow-1366.png') });
    await page.setViewportSize(PHONE);
    await page.evaluate(
      'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))',
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.locator('#flow').screenshot({ path: path.join(SHOTS, 'flow-390.png') });
    expect(problems).toEqual([]);
  });
});
