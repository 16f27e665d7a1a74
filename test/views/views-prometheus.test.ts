import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { projectionFreshness } from '../../libs/projection/projection-freshness.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { startPrometheus, type TestPrometheus } from '../support/prometheus-server.ts';

const EXAMPLE = 'examples/prometheus/view-alerts.yml';
const EXAMPLE_TEST = 'examples/prometheus/view-alerts.test.yml';

/**
 * The example alert of docs/api.md on a saved view: promtool's own test of it, and a real
 * Prometheus scraping `/metrics/views` with a token and evaluating it against Cairn's figures.
 */
describe('an alert on a saved view, in a real Prometheus', () => {
  const cairn = useCairn({ businesses: ['acme'] });
  let prometheus: TestPrometheus | undefined;
  let api: string;
  let dir: string;
  let view: string;

  const promQuery = async (expr: string) => {
    const url = `${api}/api/v1/query?query=${encodeURIComponent(expr)}`;
    return (await (await fetch(url)).json()) as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
  };

  beforeAll(async () => {
    // Three overdue tasks in alpha, one in beta, and one in alpha not yet due.
    const tasks = [
      ['alpha', '2026-01-05'],
      ['alpha', '2026-02-05'],
      ['alpha', '2026-03-05'],
      ['beta', '2026-01-05'],
      ['alpha', '2099-01-01'],
    ];
    for (const [i, [project, due]] of tasks.entries()) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: `task ${i}`, project, due_on: due },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
    }
    await waitFor(async () => (await projectionFreshness(cairn.db, new Date())).lagMs === 0, {
      timeoutMs: 60_000,
    });
    const saved = await http(cairn.url, 'POST', '/api/v1/views', {
      body: {
        name: 'Overdue by project',
        query: { metrics: ['overdue_tasks'], dimensions: ['project'], business: 'acme' },
        prometheus: true,
      },
      headers: cairn.auth,
    });
    expect(saved.status).toBe(201);
    view = saved.body.data.id;

    // The example rule for this view, its line at 2 and its 15 minutes shortened: the waiting
    // itself is promtool's test below.
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-view-alerts-'));
    const rules = parse(await fs.readFile(EXAMPLE, 'utf8'));
    const rule = rules.groups[0].rules[0];
    rule.expr = rule.expr.replace('VIEW_ID', view).replace('> 20', '> 2');
    rule.for = '0s';
    await fs.writeFile(path.join(dir, 'rules.yml'), stringify(rules));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [path.join(dir, 'rules.yml')],
      scrape_configs: [
        {
          job_name: 'cairn-views',
          metrics_path: '/metrics/views',
          authorization: { credentials: cairn.auth.Authorization.replace('Bearer ', '') },
          static_configs: [{ targets: [new URL(cairn.url).host] }],
        },
      ],
    };
    prometheus = await startPrometheus(config);
    api = prometheus.api;
  }, 120_000);

  afterAll(async () => {
    await prometheus?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('promtool checks the example rule and its test passes', () => {
    const check = spawnSync('promtool', ['check', 'rules', EXAMPLE], { encoding: 'utf8' });
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
    const test = spawnSync('promtool', ['test', 'rules', EXAMPLE_TEST], { encoding: 'utf8' });
    expect(test.status, `${test.stdout}${test.stderr}`).toBe(0);
    expect(test.stdout).toContain('SUCCESS');
  });

  it('scrapes the view’s figures with a token, as the API answers them', async () => {
    const answer = await http(cairn.url, 'GET', `/api/v1/views/${view}/answer`, {
      headers: cairn.auth,
    });
    expect(answer.status).toBe(200);
    const expected = Object.fromEntries(
      (answer.body.data as Array<{ project: string; overdue_tasks: number }>).map((row) => [
        row.project,
        row.overdue_tasks,
      ]),
    );
    expect(expected).toMatchObject({ alpha: 3, beta: 1 });
    const scraped = await waitFor(
      async () => {
        const { data } = await promQuery(`cairn_view_value{view="${view}"}`);
        return data.result.length >= 2 ? data.result : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const figures = Object.fromEntries(
      scraped.map((series) => [series.metric.project, Number(series.value[1])]),
    );
    expect(figures).toEqual(expected);
    for (const series of scraped) expect(series.metric.metric).toBe('overdue_tasks');
  });

  it('fires the example alert for the project over the line, and only for it', async () => {
    const alerts = await waitFor(
      async () => {
        const { data } = await promQuery('ALERTS{alertname="CairnOverdueTasksHigh"}');
        return data.result.length > 0 ? data.result : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(alerts.map((a) => [a.metric.project, a.metric.alertstate, a.metric.severity])).toEqual([
      ['alpha', 'firing', 'warning'],
    ]);
  });
});
