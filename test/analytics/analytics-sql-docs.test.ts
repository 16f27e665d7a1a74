import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { completedTasksTable, flowSource } from '../../libs/analytics/compile/sql/flow-source.ts';
import { BUSINESSES, STATE_TO } from '../../libs/analytics/compile/sql/query-params.ts';
import { selectLines } from '../../libs/analytics/compile/sql/select-clauses.ts';
import type { SourceContext } from '../../libs/analytics/compile/sql/source-context.ts';
import {
  join,
  raw,
  render,
  type SqlValue,
  sql,
} from '../../libs/analytics/compile/sql/sql-value.ts';
import { factsStateTables, spanSelect } from '../../libs/analytics/compile/sql/state-from-facts.ts';
import { rollupStateTable } from '../../libs/analytics/compile/sql/state-from-rollups.ts';
import { stateSource } from '../../libs/analytics/compile/sql/state-select.ts';

/*
 * Each SQL builder's doc comment shows the SQL it produces (the indented block). Here each
 * builder renders the case its comment shows, and the text must read as the comment says: `…`
 * and `<…>` stand for any text, and line breaks and indentation are the comment's own. A
 * builder changed without its comment (or the other way round) fails here.
 */

const SQL_DIR = path.resolve('libs/analytics/compile/sql');

/** The indented SQL block of the doc comment just above `name`'s declaration in `file`. */
function documentedSql(file: string, name: string): string {
  const text = fs.readFileSync(path.join(SQL_DIR, file), 'utf8');
  const at = new RegExp(`^(export )?(function|const) ${name}\\b`, 'm').exec(text)?.index;
  if (at === undefined) throw new Error(`${name} is not declared in ${file}`);
  const comment = /\/\*\*((?:(?!\/\*\*)[\s\S])*?)\*\/\s*$/.exec(text.slice(0, at))?.[1];
  if (comment === undefined) throw new Error(`${name} has no doc comment`);
  const lines = comment
    .split('\n')
    .map((line) => /^\s*\* {5}(.*)$/.exec(line)?.[1])
    .filter((line) => line !== undefined);
  if (lines.length === 0) throw new Error(`${name}'s doc comment shows no SQL`);
  return lines.join('\n');
}

const squeeze = (text: string) => text.replace(/\s+/g, ' ').replace(/\( /g, '(').trim();

/** Whether `rendered` reads as `documented`, its `…` and `<…>` standing for any text. */
function readsAs(rendered: string, documented: string): boolean {
  const pattern = squeeze(documented)
    .split(/…|<[^>]*>/)
    .map((part) =>
      part
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/ /g, ' ?')
        .replace(/\\\( \?/g, '\\( ?'),
    )
    .join('.*?');
  return new RegExp(`^${pattern}$`).test(squeeze(rendered));
}

const text = (value: SqlValue) => render(value).sql;
const tables = (values: SqlValue[]) => text(join(values, ',\n'));

const context = (over: Partial<SourceContext>): SourceContext => ({
  dimensions: [],
  metrics: [],
  filters: [],
  scope: sql`business IN ${BUSINESSES}`,
  union: false,
  source: 'facts',
  instants: 1,
  weekStart: 'monday',
  ...over,
});

const onProject = [{ dimension: 'project' as const, op: 'eq' as const, values: ['p'] }];

const cases: Array<[string, string, () => string]> = [
  [
    'flow-source.ts',
    'flowSource',
    () =>
      text(
        selectLines(
          flowSource(
            context({ dimensions: ['day'], metrics: ['tasks_created'], filters: onProject }),
          ),
        ),
      ),
  ],
  [
    'flow-source.ts',
    'completedTasksTable',
    () => text(completedTasksTable(context({ dimensions: ['day'], metrics: ['completion_rate'] }))),
  ],
  [
    'state-select.ts',
    'stateSource',
    () =>
      text(
        selectLines(
          stateSource(
            context({
              dimensions: ['week'],
              metrics: ['open_tasks', 'blocked_tasks'],
              filters: onProject,
              scope: null,
            }),
          ),
        ),
      ),
  ],
  [
    'state-from-facts.ts',
    'spanSelect',
    () =>
      text(
        selectLines(
          spanSelect(
            raw('task_gid'),
            raw('task_gid, status'),
            sql`kind IN ('task_created') AND occurred_at < ${STATE_TO}`,
          ),
        ),
      ),
  ],
  [
    'state-from-facts.ts',
    'replayedTables',
    () =>
      tables(
        factsStateTables(
          context({ dimensions: ['week'], metrics: ['blocked_tasks'], instants: 4 }),
        ),
      ),
  ],
  [
    'state-from-facts.ts',
    'openTaskCounts',
    () =>
      tables(
        factsStateTables(
          context({ dimensions: ['project'], metrics: ['open_tasks'], instants: 4 }),
        ),
      ),
  ],
  [
    'state-from-rollups.ts',
    'rowsAtOneInstant',
    () =>
      text(
        rollupStateTable(
          context({
            dimensions: ['project'],
            metrics: ['open_tasks', 'overdue_tasks', 'blocked_tasks'],
            source: 'rollup_projects_blocked_day',
          }),
        ),
      ),
  ],
  [
    'state-from-rollups.ts',
    'rowsCarriedToInstants',
    () =>
      text(
        rollupStateTable(
          context({
            dimensions: ['project'],
            metrics: ['open_tasks', 'overdue_tasks', 'blocked_tasks'],
            source: 'rollup_projects_blocked_day',
            instants: 4,
          }),
        ),
      ),
  ],
];

describe('SQL builders and their doc comments', () => {
  it.each(cases)('%s: %s renders the SQL its comment shows', (file, name, build) => {
    const rendered = build();
    const documented = documentedSql(file, name);
    expect(readsAs(rendered, documented), `${rendered}\n  ≠ documented\n${documented}`).toBe(true);
  });

  it('tells a comment that no longer says what its builder renders', () => {
    const documented = documentedSql('state-select.ts', 'stateSource');
    const rendered = cases.find(([, name]) => name === 'stateSource')?.[2]() ?? '';
    expect(readsAs(rendered.replace('HAVING', 'WHERE'), documented)).toBe(false);
    expect(readsAs(rendered.replace('blocked_at', 'edge_at'), documented)).toBe(false);
  });
});
