import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// No docker engine in CI: the file is parsed and its cross-references checked instead.
const load = async () => parse(await fs.readFile('docker-compose.yml', 'utf8'), { merge: true });

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe('docker-compose.yml', () => {
  it('parses and runs the whole stack: engines, api, projector, prometheus, grafana', async () => {
    const compose = await load();
    expect(Object.keys(compose.services).sort()).toEqual(
      ['api', 'clickhouse', 'grafana', 'postgres', 'projector', 'prometheus', 'redis'].sort(),
    );
    expect(compose.services.api.environment).toMatchObject({
      CAIRN_ROLE: 'api',
      DATABASE_URL: expect.stringMatching(/^postgres:\/\//),
      CLICKHOUSE_URL: expect.stringMatching(/^http:\/\//),
      REDIS_URL: expect.stringMatching(/^redis:\/\//),
    });
    expect(compose.services.projector.environment.CAIRN_ROLE).toBe('projector');
    // Split roles must share the master key: the pagination cursor key derives from it.
    expect(compose.services.projector.environment.CAIRN_MASTER_KEY).toBe(
      compose.services.api.environment.CAIRN_MASTER_KEY,
    );
    await fs.access(compose.services.api.build.dockerfile);
    for (const service of Object.values(compose.services) as any[]) {
      for (const config of service.configs ?? [])
        expect(compose.configs).toHaveProperty(config.source);
      for (const dependency of Object.keys(service.depends_on ?? {}).concat(
        Array.isArray(service.depends_on) ? service.depends_on : [],
      )) {
        if (!/^\d+$/.test(dependency)) expect(compose.services).toHaveProperty(dependency);
      }
    }
  });

  it('Prometheus scrapes every api and projector replica', async () => {
    const compose = await load();
    const scrape = parse(compose.configs.prometheus.content);
    const jobs = Object.fromEntries(
      scrape.scrape_configs.map((job: any) => [job.job_name, job.dns_sd_configs[0]]),
    );
    expect(jobs['cairn-api']).toMatchObject({ names: ['api'], port: 8080 });
    expect(jobs['cairn-projector']).toMatchObject({ names: ['projector'], port: 8080 });
  });

  it('Grafana is provisioned with Prometheus and a dashboard over metrics Cairn exports', async () => {
    const compose = await load();
    const datasources = parse(compose.configs['grafana-datasources'].content);
    expect(datasources.datasources[0]).toMatchObject({
      uid: 'prometheus',
      type: 'prometheus',
      url: 'http://prometheus:9090',
    });
    const providers = parse(compose.configs['grafana-dashboards'].content);
    const dashboardTarget = compose.services.grafana.configs.find(
      (config: any) => config.source === 'grafana-dashboard-cairn',
    ).target;
    expect(path.dirname(dashboardTarget)).toBe(providers.providers[0].options.path);

    const dashboard = JSON.parse(
      await fs.readFile(compose.configs['grafana-dashboard-cairn'].file, 'utf8'),
    );
    const titles = dashboard.panels.map((panel: any) => panel.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Request rate by route',
        'Latency percentiles',
        'Errors by status',
        'Analytics query latency',
        'Analytics rows read',
        'Projector lag',
        'Outbox backlog',
      ]),
    );
    // Every metric a panel queries must be defined somewhere in libs/, so a renamed metric
    // breaks this test rather than leaving an empty chart.
    const sources = await Promise.all(
      (await sourceFiles('libs')).map((file) => fs.readFile(file, 'utf8')),
    );
    const defined = new Set(
      sources.flatMap((text) => [...text.matchAll(/name: '([a-z_:]+)'/g)].map(([, name]) => name)),
    );
    const exprs = dashboard.panels.flatMap((panel: any) =>
      panel.targets.map((target: any) => target.expr),
    );
    expect(exprs.length).toBeGreaterThan(7);
    for (const panel of dashboard.panels) expect(panel.datasource.uid).toBe('prometheus');
    for (const expr of exprs) {
      const metrics = [...expr.matchAll(/\b((?:cairn|http)_[a-z_]+)/g)].map(([, name]: string[]) =>
        name!.replace(/_(bucket|count|sum)$/, ''),
      );
      expect(metrics.length, expr).toBeGreaterThan(0);
      for (const metric of metrics) expect(defined, `${metric} in ${expr}`).toContain(metric);
    }
  });
});
