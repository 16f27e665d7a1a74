import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../libs/config/config.ts';
import {
  CLICKHOUSE_MIGRATIONS_DIR,
  type ClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { clusterStatements, type SchemaFile } from '../../libs/storage/clickhouse-cluster-ddl.ts';
import { tempDir } from '../support/engines.ts';

const FIXTURE: SchemaFile[] = [
  {
    name: '0001_events.sql',
    text: `-- Events, one row each.
CREATE TABLE IF NOT EXISTS events
(
    event_id UInt64,
    task_gid String,
    at       DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY (at, event_id)
SETTINGS non_replicated_deduplication_window = 10000
`,
  },
  {
    name: '0002_more.sql',
    text: "ALTER TABLE events ADD COLUMN IF NOT EXISTS note String DEFAULT '' AFTER at\n",
  },
  {
    name: '0003_daily.sql',
    text: `CREATE TABLE IF NOT EXISTS daily
(
    day    Date,
    events SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY day
`,
  },
  {
    name: '0004_daily_mv.sql',
    text: `-- One row per day and insert.
CREATE MATERIALIZED VIEW IF NOT EXISTS daily_mv TO daily AS
SELECT toDate(at) AS day, count() AS events
FROM (SELECT * FROM events) AS e
LEFT JOIN events AS again USING (event_id)
GROUP BY day;
`,
  },
  {
    name: '0005_builds.sql',
    text: `CREATE TABLE IF NOT EXISTS builds (name String, done DateTime64(3, 'UTC'))
ENGINE = ReplacingMergeTree(done)
ORDER BY name
`,
  },
];

describe('ClickHouse cluster DDL from the schema files', () => {
  it('rewrites tables, views and alterations exactly', () => {
    expect(clusterStatements(FIXTURE, 'cairn')).toEqual([
      [
        `CREATE TABLE IF NOT EXISTS events_local ON CLUSTER cairn
(
    event_id UInt64,
    task_gid String,
    at       DateTime64(3, 'UTC')
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/events_local', '{replica}')
ORDER BY (at, event_id)
SETTINGS replicated_deduplication_window = 10000`,
        `CREATE TABLE IF NOT EXISTS events ON CLUSTER cairn AS events_local
ENGINE = Distributed(cairn, currentDatabase(), events_local, cityHash64(task_gid))`,
      ],
      [
        `ALTER TABLE events_local ON CLUSTER cairn
ADD COLUMN IF NOT EXISTS note String DEFAULT '' AFTER at`,
        `ALTER TABLE events ON CLUSTER cairn
ADD COLUMN IF NOT EXISTS note String DEFAULT '' AFTER at`,
      ],
      [
        `CREATE TABLE IF NOT EXISTS daily_local ON CLUSTER cairn
(
    day    Date,
    events SimpleAggregateFunction(sum, UInt64)
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/daily_local', '{replica}')
ORDER BY day`,
        `CREATE TABLE IF NOT EXISTS daily ON CLUSTER cairn AS daily_local
ENGINE = Distributed(cairn, currentDatabase(), daily_local, cityHash64(day))`,
      ],
      [
        // The column alias "events" is left alone; only the tables read are the local ones.
        `CREATE MATERIALIZED VIEW IF NOT EXISTS daily_mv ON CLUSTER cairn TO daily_local AS
SELECT toDate(at) AS day, count() AS events
FROM (SELECT * FROM events_local) AS e
LEFT JOIN events_local AS again USING (event_id)
GROUP BY day`,
      ],
      [
        `CREATE TABLE IF NOT EXISTS builds_local ON CLUSTER cairn
(name String, done DateTime64(3, 'UTC'))
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/builds_local', '{replica}', done)
ORDER BY name`,
        `CREATE TABLE IF NOT EXISTS builds ON CLUSTER cairn AS builds_local
ENGINE = Distributed(cairn, currentDatabase(), builds_local, cityHash64(name))`,
      ],
    ]);
  });

  it('drops a retired view on every node, and a retired table under both its names', () => {
    expect(
      clusterStatements(
        [
          { name: '0018_drop_mv.sql', text: '-- retired\nDROP VIEW IF EXISTS daily_mv\n' },
          { name: '0019_drop.sql', text: 'DROP TABLE IF EXISTS daily;\n' },
        ],
        'cairn',
      ),
    ).toEqual([
      ['DROP VIEW IF EXISTS daily_mv ON CLUSTER cairn'],
      [
        'DROP TABLE IF EXISTS daily ON CLUSTER cairn',
        'DROP TABLE IF EXISTS daily_local ON CLUSTER cairn',
      ],
    ]);
  });

  it('refuses what it has no cluster form for, and names that are not identifiers', () => {
    expect(() =>
      clusterStatements([{ name: '0009_drop.sql', text: 'DROP TABLE events' }], 'cairn'),
    ).toThrow('0009_drop.sql: no cluster form for this statement');
    expect(() => clusterStatements(FIXTURE, "c'; DROP")).toThrow('not an identifier');
    expect(() =>
      clusterStatements([{ name: '0001_x.sql', text: 'ALTER TABLE nowhere DROP COLUMN a' }], 'c'),
    ).toThrow('ALTER of nowhere, which no schema file creates');
  });

  it('is configured by CLICKHOUSE_CLUSTER, which needs a ClickHouse server', () => {
    const servers = { CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'cairn' };
    expect(loadConfig(servers).clickhouseCluster).toBe('cairn');
    expect(loadConfig({}).clickhouseCluster).toBeUndefined();
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'cairn' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...servers, CLICKHOUSE_CLUSTER: 'a-b' })).toThrow(
      'CLICKHOUSE_CLUSTER must be a cluster name',
    );
  });

  describe('on every file in sql/clickhouse', () => {
    let dataDir: string;
    let clickhouse: ClickHouse;
    let files: SchemaFile[];
    let statements: string[][];

    beforeAll(async () => {
      dataDir = await tempDir();
      clickhouse = await openClickHouse({ dataDir });
      const names = (await fs.readdir(CLICKHOUSE_MIGRATIONS_DIR)).filter((n) => n.endsWith('.sql'));
      files = await Promise.all(
        names.sort().map(async (name) => ({
          name,
          text: await fs.readFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, name), 'utf8'),
        })),
      );
      statements = clusterStatements(files, 'cairn_cluster');
    });
    afterAll(async () => {
      await clickhouse.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    });

    it('yields statements ClickHouse’s own parser accepts', async () => {
      // The parser does refuse: a statement cut short is an error, not a formatted string.
      await expect(
        clickhouse.client.query({
          query: 'SELECT formatQuery({statement:String})',
          query_params: {
            statement: 'CREATE TABLE t ON CLUSTER c (a UInt8) ENGINE = Distributed(',
          },
        }),
      ).rejects.toThrow(/Syntax error/i);
      expect(statements.flat().length).toBeGreaterThanOrEqual(files.length);
      for (const statement of statements.flat()) {
        const result = await clickhouse.client.query({
          query: 'SELECT formatQuery({statement:String}) AS formatted',
          query_params: { statement },
          format: 'JSONEachRow',
        });
        const [row] = (await result.json()) as Array<{ formatted: string }>;
        expect(row?.formatted, statement).toContain('ON CLUSTER cairn_cluster');
      }
    });

    it('replicates every table, puts a Distributed table under its name, and feeds views locally', () => {
      const created = new Set(
        files.flatMap((file) => /CREATE TABLE (?:IF NOT EXISTS )?(\w+)/.exec(file.text)?.[1] ?? []),
      );
      for (const [k, file] of files.entries()) {
        const out = statements[k]!;
        const table = /CREATE TABLE (?:IF NOT EXISTS )?(\w+)/.exec(file.text)?.[1];
        if (table) {
          expect(out[0]).toMatch(
            new RegExp(
              `^CREATE TABLE IF NOT EXISTS ${table}_local ON CLUSTER cairn_cluster\\n[\\s\\S]*ENGINE = Replicated\\w*MergeTree\\('/clickhouse/tables/\\{shard\\}/\\{database\\}/${table}_local', '\\{replica\\}'`,
            ),
          );
          expect(out[1]).toMatch(
            new RegExp(
              `^CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER cairn_cluster AS ${table}_local\\nENGINE = Distributed\\(cairn_cluster, currentDatabase\\(\\), ${table}_local, cityHash64\\(\\w+\\)\\)$`,
            ),
          );
        }
        for (const statement of out) {
          expect(statement).not.toContain('non_replicated_deduplication_window');
          if (statement.includes('MATERIALIZED VIEW')) {
            expect(statement).toMatch(/ TO \w+_local AS\n/);
            const read = [...statement.matchAll(/\b(?:FROM|JOIN)\s+(\w+)/g)].map(
              ([, name]) => name,
            );
            expect(read.filter((name) => name!.endsWith('_local')).length).toBeGreaterThan(0);
            expect(read.filter((name) => created.has(name!))).toEqual([]);
          }
        }
      }
      expect(statements[0]![1]).toContain('cityHash64(task_gid)');
    });
  });
});
