// `npm run bench -- insert-cost [--rows 300] [--inserts 20] [--data-root DIR]`: what one
// projector insert costs embedded ClickHouse (chDB), by rollup view. For each set of views
// (every view, none, then each view on its own), in one migrated data directory (chDB opens one
// per process), the views outside the set are dropped and those in it re-created from their own
// statements, and batches of `--rows` facts go in through the projector's own insert
// (`insertFacts`, deduplication token and all). Prints the process's CPU and the wall time per
// insert; the difference between two rows is what a view adds to every insert. Every view
// together is measured three times in turns with the same insert planned by the analyzer (the
// projector's inserts use the older planner).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import type { FactRow } from '../libs/projection/fact-rows.ts';
import { insertFacts } from '../libs/projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../libs/storage/clickhouse.ts';
import { numberOption, textOption } from './options.ts';

const WARM_INSERTS = 5;

/** How an insert plans its views: as the projector sends it, or with ClickHouse's analyzer. */
type Planner = 'as shipped' | 'analyzer';

export async function run(args: string[]): Promise<void> {
  const rows = numberOption(args, 'rows', 300);
  const inserts = numberOption(args, 'inserts', 20);
  const root = textOption(args, 'data-root', os.tmpdir());
  // chDB opens one data directory per process: every set of views runs in this one.
  const dataDir = await fs.mkdtemp(path.join(root, 'cairn-insert-cost-'));
  const clickhouse = await openClickHouse({ dataDir });
  try {
    const client = clickhouse.client;
    await migrateClickHouse(client);
    const views = await viewDefinitions(client);
    console.log(
      `${rows} facts per insert, ${inserts} inserts after ${WARM_INSERTS} to warm up; data under ${root}`,
    );
    console.log('views kept                        cpu ms/insert  of it kernel  wall ms/insert');
    const names = [...views.keys()];
    let factId = 0;
    const insert = (planner: Planner) => {
      const batch = Array.from({ length: rows }, () => fact(++factId));
      const token = `insert-cost:${factId}`;
      if (planner === 'as shipped') return insertFacts(client, 'facts', batch, token);
      // The same insert planned by the analyzer, to show what the projector's setting saves.
      return client.insert({
        table: 'facts',
        values: batch,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: token, allow_experimental_analyzer: 1 },
      });
    };
    // The two planners in turns, as the kernel's share moves from run to run.
    const runs: Array<[string[], Planner]> = [];
    for (let round = 0; round < 3; round++) runs.push([names, 'as shipped'], [names, 'analyzer']);
    runs.push(
      [[], 'as shipped'],
      ...names.map((name): [string[], Planner] => [[name], 'as shipped']),
    );
    for (const [kept, planner] of runs) {
      for (const name of names) await client.command({ query: `drop view if exists ${name}` });
      for (const name of kept) await client.command({ query: views.get(name)! });
      for (let i = 0; i < WARM_INSERTS; i++) await insert(planner);
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < inserts; i++) await insert(planner);
      const used = process.cpuUsage(cpu);
      const all = `all ${names.length}${planner === 'analyzer' ? ', analyzer' : ''}`;
      const label = kept.length === names.length ? all : (kept[0] ?? 'none');
      const cells = [
        ((used.user + used.system) / 1000 / inserts).toFixed(1).padStart(13),
        (used.system / 1000 / inserts).toFixed(1).padStart(12),
        ((performance.now() - started) / inserts).toFixed(1).padStart(14),
      ];
      console.log(`${label.padEnd(32)}  ${cells.join('  ')}`);
    }
  } finally {
    await clickhouse.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** Each materialized view the migrations create, by name, with the statement that creates it. */
async function viewDefinitions(client: ClickHouseClient): Promise<Map<string, string>> {
  const result = await client.query({
    query: `select name, create_table_query from system.tables
      where database = currentDatabase() and engine = 'MaterializedView' order by name`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ name: string; create_table_query: string }>();
  return new Map(rows.map((row) => [row.name, row.create_table_query]));
}

/** A creation fact of one of a few projects and assignees, spread over a day. */
function fact(id: number): FactRow {
  const at = new Date(Date.UTC(2026, 10, 26) + (id % 86_400) * 1000).toISOString();
  return {
    fact_id: id,
    kind: 'task_created',
    business: 'bench',
    task_gid: `task-${id}`,
    occurred_at: at,
    project: `project-${id % 7}`,
    assignee: `user-${id % 13}`,
    status: 'open',
    previous_status: '',
    previous_project: '',
    previous_assignee: '',
    previous_due_on: null,
    due_on: null,
    task_created_at: at,
    dependency_gid: '',
  };
}
