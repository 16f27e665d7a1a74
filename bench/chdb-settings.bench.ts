// `npm run bench -- chdb-settings --data-root DIR [--facts 100000000] [--rounds 80]` on a data
// directory the query benchmark loaded (DIR/<facts>; stop anything else using it first). Three
// dashboard statements, each timed in turns on one chDB session: carrying every setting, as
// each statement did before the adapter sent only what the session lacks, and carrying none,
// which is what it sends when the previous statement left the same values behind.
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { runOnEngine } from '../libs/analytics/execute/query-execution.ts';
import type { QueryRequest } from '../libs/analytics/parse/query-parser.ts';
import type { AnalyticsDeps } from '../libs/analytics/query.service.ts';
import { prepareQuery } from '../libs/analytics/query.service.ts';
import { ROLLUPS } from '../libs/analytics/sources/rollups.ts';
import { BASE_SETTINGS } from '../libs/storage/clickhouse.ts';
import { textOption } from './options.ts';
import { percentile } from './percentile.ts';

const QUERIES: Array<[string, QueryRequest]> = [
  [
    'open + overdue by assignee, 1 biz',
    { metrics: ['open_tasks', 'overdue_tasks'], dimensions: ['assignee'], business: 'biz-3' },
  ],
  [
    'created by day, 30 d, 1 biz',
    { metrics: ['tasks_created'], dimensions: ['day'], business: 'biz-3' },
  ],
  ['open by month, year', { metrics: ['open_tasks'], dimensions: ['month'], period: 'this_year' }],
];

export async function run(args: string[]): Promise<void> {
  const root = textOption(args, 'data-root', '');
  if (!root) throw new Error('--data-root DIR is required: a directory the query benchmark loaded');
  const facts = textOption(args, 'facts', '100000000');
  const rounds = Number(textOption(args, 'rounds', '80'));
  const connection = createChdbConnection({ path: path.join(root, facts, 'ch') });
  // One session, two clients: one adds the base settings to every statement, one adds nothing.
  const everySetting = createClient({
    connection: connection as never,
    clickhouse_settings: BASE_SETTINGS,
  });
  const bare = createClient({ connection: connection as never });
  const deps: AnalyticsDeps = {
    clickhouse: everySetting,
    freshness: async () => {
      throw new Error('not read when compiling');
    },
    // The query benchmark fills every rollup before it times anything.
    rollups: () => new Set(ROLLUPS.map((rollup) => rollup.table)),
    now: () => new Date(),
    maxRows: 10_000,
    timeoutMs: 600_000,
    staleAfterMs: 5_000,
  };
  const limits = { timeoutMs: 600_000, maxMemoryBytes: 1_073_741_824 };
  const signal = new AbortController().signal;
  console.log(`${facts} facts; ${rounds} rounds; ms`);
  console.log(
    'statement                           source                every setting p50  p90   none p50  p90',
  );
  for (const [name, request] of QUERIES) {
    const planned = await prepareQuery(deps, request, null, new Date());
    const { sql, params } = planned.compiled;
    const timed = async (work: () => Promise<unknown>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    // The first run leaves the analytics settings in the session for the bare client.
    await runOnEngine(everySetting, planned.compiled, limits, signal);
    const all: number[] = [];
    const none: number[] = [];
    for (let round = 0; round < rounds; round++) {
      all.push(await timed(() => runOnEngine(everySetting, planned.compiled, limits, signal)));
      none.push(
        await timed(async () =>
          (await bare.query({ query: sql, query_params: params, format: 'JSON' })).json(),
        ),
      );
    }
    const cell = (values: number[], p: number) => percentile(values, p).toFixed(1).padStart(5);
    console.log(
      `${name.padEnd(36)}${planned.source.padEnd(22)}${cell(all, 0.5).padStart(17)}${cell(all, 0.9)}${cell(none, 0.5).padStart(10)}${cell(none, 0.9)}`,
    );
  }
  await everySetting.close();
}
