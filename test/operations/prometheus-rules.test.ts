import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { startPrometheus, type TestPrometheus } from '../support/prometheus-server.ts';

// The operators' files: Prometheus rules with their `promtool test rules` files, and the
// Grafana dashboard. promtool and the prometheus server come from Debian's prometheus package.
const RULES_DIR = 'apps/server/deploy/prometheus';
const DASHBOARD = 'apps/server/deploy/grafana/cairn-dashboard.json';
const RUNBOOKS = 'docs/operations.md';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

async function deployFiles(): Promise<{ rules: string[]; tests: string[] }> {
  const rules: string[] = [];
  const tests: string[] = [];
  for (const name of (await fs.readdir(RULES_DIR)).sort()) {
    const file = path.join(RULES_DIR, name);
    const content = parse(await fs.readFile(file, 'utf8'));
    if (content?.groups) rules.push(file);
    else if (content?.tests) tests.push(file);
    else throw new Error(`${file} has neither groups: nor tests:`);
  }
  return { rules, tests };
}

async function allRules(): Promise<Rule[]> {
  const { rules } = await deployFiles();
  const groups = await Promise.all(
    rules.map(async (file) => parse(await fs.readFile(file, 'utf8')).groups),
  );
  return groups.flat().flatMap((group: { rules: Rule[] }) => group.rules);
}

function promtool(args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { encoding: 'utf8' });
  if (run.error) throw new Error(`promtool: ${run.error.message} (apt-get install prometheus)`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
      heading!
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('Prometheus rules in apps/server/deploy/prometheus', () => {
  it('promtool check rules passes on every rules file', async () => {
    const { rules } = await deployFiles();
    expect(rules.map((file) => path.basename(file))).toEqual(
      expect.arrayContaining(['cairn-alerts.yml', 'cairn-rules.yml']),
    );
    const { status, output } = promtool(['check', 'rules', ...rules]);
    expect(output).not.toMatch(/FAILED|WARNING/);
    expect(status, output).toBe(0);
    expect(output.match(/SUCCESS: \d+ rules found/g)).toHaveLength(rules.length);
  });

  it('promtool test rules passes, covering every rules file and every alert firing and quiet', async () => {
    const { rules, tests } = await deployFiles();
    const { status, output } = promtool(['test', 'rules', ...tests]);
    expect(status, output).toBe(0);
    expect(output.match(/SUCCESS/g)).toHaveLength(tests.length);

    const covered = new Set<string>();
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const file of tests) {
      const content = parse(await fs.readFile(file, 'utf8'));
      for (const ruleFile of content.rule_files)
        covered.add(path.join(path.dirname(file), ruleFile));
      for (const test of content.tests) {
        for (const check of test.alert_rule_test ?? []) {
          (check.exp_alerts?.length ? firing : quiet).add(check.alertname);
        }
      }
    }
    expect([...covered].sort()).toEqual(rules);
    const alerts = (await allRules()).flatMap((rule) => rule.alert ?? []);
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const alert of alerts) {
      expect(firing, `${alert} has a firing case`).toContain(alert);
      expect(quiet, `${alert} has a quiet case`).toContain(alert);
    }
  });

  it('every alert has a severity, summary, description and a runbook in docs/operations.md', async () => {
    const runbooks = await fs.readFile(RUNBOOKS, 'utf8');
    // Only the alerts' own sections count, not any heading of the page.
    const runbookSection = runbooks.slice(runbooks.indexOf('\n## Runbooks\n'));
    const sections = anchors(runbookSection.slice(0, runbookSection.indexOf('\n## ', 1)));
    const alerts = (await allRules()).filter((rule) => rule.alert);
    expect(new Set(alerts.map((rule) => rule.alert)).size).toBe(alerts.length);
    for (const rule of alerts) {
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toMatch(/\w/);
      expect(rule.annotations?.description, rule.alert).toMatch(/\w/);
      const runbook = /^docs\/operations\.md#(.+)$/.exec(rule.annotations?.runbook_url ?? '');
      expect(runbook, `${rule.alert} runbook_url`).not.toBeNull();
      expect(sections, `${rule.alert}: no section #${runbook![1]}`).toContain(runbook![1]);
    }
  });
});

const PERIODS = ['today', 'last_7_days', 'this_month'];

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}

describe('a real Prometheus scraping a real Cairn, with the rules and the dashboard', () => {
  const cairn = useCairn();
  let prometheus: TestPrometheus | undefined;
  let api: string;

  // Prometheus's HTTP API answers {status, data}; the tests read what they need of `data`.
  const promApi = async (pathAndQuery: string): Promise<any> =>
    (await fetch(`${api}${pathAndQuery}`)).json();
  const promQuery = async (expr: string) => {
    const url = `${api}/api/v1/query?query=${encodeURIComponent(expr)}`;
    return (await fetch(url)).json() as Promise<{
      status: string;
      error?: string;
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    }>;
  };

  beforeAll(async () => {
    const { rules } = await deployFiles();
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: rules.map((file) => path.resolve(file)),
      scrape_configs: [
        { job_name: 'cairn', static_configs: [{ targets: [new URL(cairn.url).host] }] },
      ],
    };
    prometheus = await startPrometheus(config);
    api = prometheus.api;

    // Light traffic on every path the dashboard and the SLOs watch, before and after the first
    // scrape (Prometheus applies new targets within 5 s), so that rates see it. Enough requests
    // that the SLO alerts' minimum (10 in the window) is passed and their conditions evaluated.
    const gids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
      gids.push(res.body.data.gid);
    }
    const traffic = async () => {
      for (let i = 0; i < 12; i++) {
        const listing = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[i % 3]}/dependents`, {
          headers: cairn.auth,
        });
        expect(listing.status).toBe(200);
        const query = await http(cairn.url, 'POST', '/api/v1/query', {
          body: { metrics: ['tasks_created'], dimensions: ['business'], period: PERIODS[i % 3] },
          headers: cairn.auth,
        });
        expect(query.status).toBe(200);
      }
      const missing = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', {
        headers: cairn.auth,
      });
      expect(missing.status).toBe(404);
    };
    await traffic();
    const scrapes = async () =>
      Number((await promQuery('count_over_time(up[1m])')).data.result[0]?.value[1] ?? 0);
    await waitFor(async () => (await scrapes()) >= 1, { timeoutMs: 20_000, intervalMs: 100 });
    await traffic();
    const before = await scrapes();
    await waitFor(
      async () => {
        const projected = await promQuery('sum(cairn_projector_facts_projected_total)');
        return (
          Number(projected.data.result[0]?.value[1] ?? 0) >= 3 && (await scrapes()) >= before + 2
        );
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    // Every rule evaluated since.
    const since = Date.now() / 1000;
    await waitFor(
      async () => {
        const { data } = await promApi('/api/v1/rules');
        return data.groups.every(
          (group: { lastEvaluation: string }) => Date.parse(group.lastEvaluation) / 1000 > since,
        );
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
  });

  it('every metric the dashboard and the rules name is one Cairn exports', async () => {
    const scrape = (await http(cairn.url, 'GET', '/metrics')).text;
    const exported = new Set([...scrape.matchAll(/^# TYPE (\w+) /gm)].map(([, name]) => name));
    const dashboard = JSON.parse(await fs.readFile(DASHBOARD, 'utf8'));
    const exprs = [
      ...dashboard.panels.flatMap((panel: Panel) => (panel.targets ?? []).map((t) => t.expr)),
      ...dashboard.templating.list.flatMap((variable: { definition?: string }) =>
        variable.definition ? [variable.definition] : [],
      ),
      ...(await allRules()).map((rule) => rule.expr),
    ];
    const names = new Set(
      exprs.flatMap((expr) =>
        // Recording rules' names (with colons) are not Cairn's.
        [...expr.matchAll(/(?<![\w:])((?:cairn|http|nodejs|process)_[a-z0-9_]+)\b(?!:)/g)].map(
          ([, name]) => name!.replace(/_(bucket|count|sum)$/, ''),
        ),
      ),
    );
    expect(names.size).toBeGreaterThan(30);
    for (const name of names) expect(exported, name).toContain(name);
  });

  it('the dashboard filters every series by the role and instance variables, which list role "all"', async () => {
    const dashboard = JSON.parse(await fs.readFile(DASHBOARD, 'utf8'));
    const variables = Object.fromEntries(
      dashboard.templating.list.map((v: { name: string }) => [v.name, v]),
    );
    expect(variables.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    // The variables' own queries, asked of Prometheus the way Grafana asks them.
    const labelValues = async (definition: string) => {
      const [, match, label] = /^label_values\((.+), (\w+)\)$/.exec(definition)!;
      const selector = match!.replace('$role', '.*');
      const query = `/api/v1/label/${label}/values?match[]=${encodeURIComponent(selector)}`;
      return (await promApi(query)).data as string[];
    };
    expect(await labelValues(variables.role.definition)).toEqual(['all']);
    expect(await labelValues(variables.instance.definition)).toEqual([new URL(cairn.url).host]);
    for (const panel of dashboard.panels as Panel[]) {
      for (const { expr } of panel.targets ?? []) {
        const selectors = [...expr.matchAll(/\b[a-z][a-z0-9_]*(\{[^}]*\})?\[?/g)].filter(
          ([whole]) => /^(cairn|http|nodejs|process)_/.test(whole),
        );
        expect(selectors.length, expr).toBeGreaterThan(0);
        for (const [whole, labels] of selectors)
          expect(labels ?? '', `${whole} in ${panel.title}`).toContain(
            'role=~"$role",instance=~"$instance"',
          );
      }
    }
  });

  it('every panel expression runs, and the HTTP, query, cache, projector and process panels show data', async () => {
    const dashboard = JSON.parse(await fs.readFile(DASHBOARD, 'utf8'));
    const instance = new URL(cairn.url).host;
    const withData = new Set([
      'Request rate by route',
      'Latency percentiles',
      'Errors by status',
      'Requests by route and status',
      'Analytics query latency',
      '/query and dependents listing latency (HTTP)',
      'SLIs: share of requests failing (5xx) or slow',
      'Analytics rows read',
      'Engine statements',
      'Result cache',
      'Result cache hit ratio',
      'Admission queue',
      'Projector lag',
      'Outbox backlog',
      'Facts projected',
      'Projector batches',
      'Rollups complete',
      'Rollup fill',
      'Event loop lag',
      'Memory',
      'Uptime and restarts',
    ]);
    const titles = (dashboard.panels as Panel[]).map((panel) => panel.title);
    for (const title of withData) expect(titles).toContain(title);
    for (const panel of dashboard.panels as Panel[]) {
      for (const { expr } of panel.targets ?? []) {
        // As Grafana sends it with role "all" (what `npm start` exports) and this instance chosen.
        const sent = expr
          .replaceAll('$__rate_interval', '1m')
          .replaceAll('$role', 'all')
          .replaceAll('$instance', instance.replaceAll('.', '\\\\.'));
        const answer = await promQuery(sent);
        expect(answer.status, `${panel.title}: ${sent} ${answer.error ?? ''}`).toBe('success');
        if (withData.has(panel.title))
          expect(answer.data.result.length, `${panel.title}: ${sent}`).toBeGreaterThan(0);
      }
    }
    const hosts = await promQuery(
      `sum by (route) (http_request_duration_seconds_count{role=~"all"})`,
    );
    expect(hosts.data.result.map((r) => r.metric.route)).toEqual(
      expect.arrayContaining(['/api/v1/query', '/api/v1/tasks/:gid/dependents']),
    );
  });

  it('every rule evaluates without error, the SLIs have values and no alert is pending or firing', async () => {
    const { data } = await promApi('/api/v1/rules');
    const rules = data.groups.flatMap((group: { rules: object[] }) => group.rules);
    expect(rules.length).toBe((await allRules()).length);
    for (const rule of rules) {
      expect(rule, rule.name).toMatchObject({ health: 'ok' });
      expect(rule.lastError ?? '', rule.name).toBe('');
    }
    const value = async (expr: string) => {
      const answer = await promQuery(expr);
      expect(answer.data.result, expr).toHaveLength(1);
      return Number(answer.data.result[0]!.value[1]);
    };
    // Every request so far succeeded: 0 errors, not a missing value.
    expect(await value('cairn_sli:query_errors:ratio_rate5m')).toBe(0);
    expect(await value('cairn_sli:dependents_errors:ratio_rate5m')).toBe(0);
    expect(await value('cairn_sli:query_requests:rate1h * 3600')).toBeGreaterThanOrEqual(10);
    expect(await value('cairn_sli:dependents_requests:rate1h * 3600')).toBeGreaterThanOrEqual(10);
    const slow = await value('cairn_sli:query_slow:ratio_rate5m');
    expect(slow).toBeGreaterThanOrEqual(0);
    expect(slow).toBeLessThanOrEqual(1);

    const alerts = (await promApi('/api/v1/alerts')).data.alerts;
    expect(alerts, JSON.stringify(alerts)).toEqual([]);
    expect(prometheus?.log()).not.toMatch(/level=error/);
  });
});
