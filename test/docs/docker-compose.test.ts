import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEPLOYMENT_VARIABLES } from '../../dev-tools/cluster/cluster.ts';
import { ROLE_VARIABLES } from '../../dev-tools/cluster/role-process.ts';

// No docker engine in CI: the file is parsed and its cross-references checked instead.
const load = async () => parse(await fs.readFile('docker-compose.yml', 'utf8'), { merge: true });

/** Compose's variable interpolation, the forms this file uses: ${VAR}, ${VAR:-default}, ${VAR:?error}. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name, form, rest) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (form === '?') throw new Error(`required variable ${name} is missing a value: ${rest}`);
    return form === '-' ? rest : '';
  });
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe('docker-compose.yml', () => {
  it('parses and runs the whole stack: engines, api, projector, prometheus, grafana', async () => {
    const compose = await load();
    const always = Object.entries(compose.services)
      .filter(([, service]: [string, any]) => service.profiles === undefined)
      .map(([name]) => name);
    expect(always.sort()).toEqual(
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

  it('gives api and projector the variables dev:cluster gives its role processes', async () => {
    const compose = await load();
    const expected = [...DEPLOYMENT_VARIABLES, ...ROLE_VARIABLES].sort();
    for (const service of ['api', 'projector']) {
      expect(Object.keys(compose.services[service].environment).sort(), service).toEqual(expected);
    }
  });

  it('has no default master key: compose refuses to start without CAIRN_MASTER_KEY', async () => {
    const compose = await load();
    const cairn = Object.entries(compose.services).filter(
      ([, service]: [string, any]) => service.environment?.CAIRN_ROLE !== undefined,
    );
    expect(cairn.map(([name]) => name).sort()).toEqual(
      ['api', 'api-cluster', 'projector', 'projector-cluster'].sort(),
    );
    for (const [name, service] of cairn as [string, any][]) {
      const env = service.environment;
      // Compose's own refusal: `${VAR:?message}` stops `docker compose up` when VAR is unset or empty.
      expect(env.CAIRN_MASTER_KEY, name).toMatch(
        /^\$\{CAIRN_MASTER_KEY:\?[^}]*openssl rand[^}]*\}$/,
      );
      expect(() => interpolate(env.CAIRN_MASTER_KEY, {})).toThrow(/CAIRN_MASTER_KEY/);
      expect(() => interpolate(env.CAIRN_MASTER_KEY, { CAIRN_MASTER_KEY: '' })).toThrow(
        /CAIRN_MASTER_KEY/,
      );
      expect(interpolate(env.CAIRN_MASTER_KEY, { CAIRN_MASTER_KEY: 'from-the-shell' })).toBe(
        'from-the-shell',
      );
      // The rotation variables pass through from the shell and are empty (unset) otherwise.
      for (const variable of [
        'CAIRN_MASTER_KEY_PREVIOUS',
        'CAIRN_CURSOR_SECRET',
        'CAIRN_CURSOR_SECRET_PREVIOUS',
      ]) {
        expect(interpolate(env[variable], {}), `${name} ${variable}`).toBe('');
        expect(interpolate(env[variable], { [variable]: 'given' })).toBe('given');
      }
    }
    const text = await fs.readFile('docker-compose.yml', 'utf8');
    expect(text).not.toMatch(/CAIRN_MASTER_KEY:-/);
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

  it('Prometheus loads every rule file of apps/server/deploy/prometheus/, mounted from the repository', async () => {
    const compose = await load();
    const scrape = parse(compose.configs.prometheus.content);
    const mounted = new Map<string, string>(
      compose.services.prometheus.configs.map((config: any) => [
        config.target,
        compose.configs[config.source].file,
      ]),
    );
    const loaded: string[] = [];
    for (const target of scrape.rule_files) {
      const file = mounted.get(target);
      expect(file, `${target} is mounted from a file`).toBeDefined();
      expect(parse(await fs.readFile(file!, 'utf8')), file).toHaveProperty('groups');
      loaded.push(path.normalize(file!));
    }
    // Files with `groups:` are rules; their `promtool test rules` files (`tests:`) are not.
    const dir = 'apps/server/deploy/prometheus';
    const rules: string[] = [];
    for (const name of await fs.readdir(dir)) {
      const content = parse(await fs.readFile(path.join(dir, name), 'utf8'));
      if (content.groups) rules.push(path.join(dir, name));
      else expect(content, name).toHaveProperty('tests');
    }
    expect(rules.length).toBeGreaterThanOrEqual(2);
    expect(loaded.sort()).toEqual(rules.sort());
    expect(scrape.global.evaluation_interval).toBe(scrape.global.scrape_interval);
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
      // Any quoted metric-like name: some families are created through a helper, not `name:`.
      sources.flatMap((text) =>
        [...text.matchAll(/'((?:cairn|http)_[a-z_]+)'/g)].map(([, name]) => name),
      ),
    );
    const charts = dashboard.panels.filter((panel: any) => panel.type !== 'row');
    const exprs = charts.flatMap((panel: any) => panel.targets.map((target: any) => target.expr));
    expect(exprs.length).toBeGreaterThan(7);
    // The data source is a variable (any Prometheus; the provisioned one is the default).
    const variables = Object.fromEntries(
      dashboard.templating.list.map((variable: any) => [variable.name, variable]),
    );
    expect(variables.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const panel of charts) {
      expect(panel.datasource.uid, panel.title).toMatch(/^\$\{datasource\}$/);
      for (const target of panel.targets)
        expect(target.datasource.uid).toMatch(/^\$\{datasource\}$/);
    }
    for (const expr of exprs) {
      const metrics = [...expr.matchAll(/\b((?:cairn|http|nodejs|process)_[a-z0-9_]+)/g)].map(
        ([, name]: string[]) => name!.replace(/_(bucket|count|sum)$/, ''),
      );
      expect(metrics.length, expr).toBeGreaterThan(0);
      // nodejs_* and process_* are prom-client's defaults: test/operations/prometheus-rules.test.ts checks
      // every name against a live scrape.
      for (const metric of metrics.filter((name) => /^(cairn|http)_/.test(name)))
        expect(defined, `${metric} in ${expr}`).toContain(metric);
    }
  });

  it('has a "cluster" profile: Keeper, two replicas of one shard, Cairn in cluster mode', async () => {
    const compose = await load();
    const cluster = Object.entries(compose.services)
      .filter(([, service]: [string, any]) => service.profiles?.includes('cluster'))
      .map(([name]) => name);
    expect(cluster.sort()).toEqual(
      ['api-cluster', 'clickhouse-1', 'clickhouse-2', 'keeper', 'projector-cluster'].sort(),
    );
    for (const role of ['api', 'projector']) {
      const service = compose.services[`${role}-cluster`];
      expect(service.environment).toMatchObject({
        CAIRN_ROLE: role,
        CLICKHOUSE_CLUSTER: 'cairn',
        CLICKHOUSE_URL: expect.stringMatching(/^http:\/\/cairn:cairn@clickhouse-[12]:8123\//),
      });
      expect(service.build).toEqual(compose.services.api.build);
      expect(Object.keys(service.depends_on)).toEqual(
        expect.arrayContaining(['clickhouse-1', 'clickhouse-2']),
      );
    }
    expect(compose.services['api-cluster'].ports).toEqual(['8081:8080']);
    const replicas = ['clickhouse-1', 'clickhouse-2'].map((name) => compose.services[name]);
    expect(replicas.map((r) => r.environment.CLICKHOUSE_REPLICA)).toEqual([
      'clickhouse-1',
      'clickhouse-2',
    ]);
    expect(replicas.map((r) => r.hostname)).toEqual(['clickhouse-1', 'clickhouse-2']);
    expect(new Set(replicas.map((r) => r.volumes[0]!.split(':')[0])).size).toBe(2);
    for (const replica of replicas) expect(replica.configs[0].source).toBe('clickhouse-cluster');

    // The cluster named in CLICKHOUSE_CLUSTER, with both replicas, Keeper and the macros the
    // generated ReplicatedMergeTree paths use ({shard}, {replica}).
    const xml = compose.configs['clickhouse-cluster'].content as string;
    expect(xml).toMatch(/<remote_servers>\s*<cairn>\s*<shard>/);
    expect(xml).toContain('<internal_replication>true</internal_replication>');
    expect(xml.match(/<replica><host>clickhouse-[12]<\/host><port>9000<\/port>/g)).toHaveLength(2);
    expect(xml).toContain(
      '<zookeeper><node><host>keeper</host><port>9181</port></node></zookeeper>',
    );
    expect(xml).toMatch(
      /<macros>\s*<shard>1<\/shard>\s*<replica from_env="CLICKHOUSE_REPLICA" \/>/,
    );
    const keeper = compose.configs.keeper.content as string;
    expect(keeper).toContain('<tcp_port>9181</tcp_port>');
    expect(keeper).toContain('<hostname>keeper</hostname>');
    for (const volume of ['keeper-data', 'clickhouse-1-data', 'clickhouse-2-data'])
      expect(compose.volumes).toHaveProperty(volume);
  });
});

describe('apps/server/Dockerfile', () => {
  const lines = async () =>
    (await fs.readFile('apps/server/Dockerfile', 'utf8'))
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));

  it('installs runtime dependencies only, without chDB, and runs as a non-root user', async () => {
    const file = await lines();
    const from = file.filter((line) => line.startsWith('FROM '));
    expect(from).toEqual([
      'FROM node:24-bookworm-slim AS dependencies',
      'FROM node:24-bookworm-slim',
    ]);
    expect(file).toContain(
      'RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force',
    );
    const manifest = JSON.parse(await fs.readFile('package.json', 'utf8'));
    expect(manifest.optionalDependencies).toHaveProperty('chdb');
    expect(manifest.dependencies).not.toHaveProperty('chdb');
    expect(manifest.dependencies).not.toHaveProperty('tsx');
    // Only what runs: no tests, benches or tooling in the image.
    const copies = file.filter((line) => line.startsWith('COPY '));
    expect(copies).toEqual([
      'COPY package.json package-lock.json ./',
      'COPY --from=dependencies /app/node_modules ./node_modules',
      'COPY package.json ./',
      'COPY apps ./apps',
      'COPY libs ./libs',
      'COPY sql ./sql',
    ]);
    const user = file.findLast((line) => line.startsWith('USER '));
    expect(user).toBe('USER node');
    expect(file.indexOf(user!)).toBeGreaterThan(file.indexOf('COPY sql ./sql'));
    const ignored = (await fs.readFile('.dockerignore', 'utf8')).split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.data', '.git']));
  });

  it('runs TypeScript with Node’s own type stripping and checks its health', async () => {
    const file = await lines();
    expect(file.at(-1)).toBe('CMD ["node", "apps/server/main.ts"]');
    expect(file.join('\n')).not.toMatch(/\btsx\b|\bnpm start\b/);
    const health = file.find((line) => line.startsWith('HEALTHCHECK '));
    expect(health).toMatch(
      /^HEALTHCHECK --interval=\d+s --timeout=\d+s --start-period=\d+s --retries=\d+ CMD \["node", "-e", ".*\/healthz/,
    );
    expect(file).toContain('ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080');
    // Written files (an embedded engine, the export spool) go where the node user may write.
    expect(file).toContain('ENV DATA_DIR=/home/node/data');
    // No secret is baked into the image: the master key comes from the environment it runs in.
    expect(file.join('\n')).not.toMatch(/CAIRN_MASTER_KEY|CAIRN_CURSOR_SECRET/);
    // Type stripping runs only erasable TypeScript; the compiler holds the code to it.
    const tsconfig = await fs.readFile('tsconfig.json', 'utf8');
    expect(tsconfig).toContain('"erasableSyntaxOnly": true');
    expect(tsconfig).toContain('"verbatimModuleSyntax": true');
  });
});
