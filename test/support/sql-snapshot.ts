import { expect } from 'vitest';
import { render, type SqlValue } from '../../libs/analytics/compile/sql/sql-value.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { tempDir } from './engines.ts';

/*
 * The text of a `.sql` snapshot: each statement under a `-- title` line, ended by `;`, with what
 * is bound to its placeholders in a comment block below it, so a diff shows a change of text and
 * a change of values side by side.
 */

/** A compiled statement: its text and the values bound to its placeholders. */
export interface Bound {
  sql: string;
  params: Record<string, unknown>;
}

const comment = (lines: string[]) => lines.map((line) => `-- ${line}`.trimEnd());

/** A statement with its bound values, one `name = JSON` line each. */
export function boundText(title: string, statement: Bound): string {
  const values = Object.entries(statement.params).map(
    ([name, value]) => `  ${name} = ${JSON.stringify(value)}`,
  );
  return [
    ...comment([title]),
    `${statement.sql};`,
    ...comment(values.length > 0 ? ['params:', ...values] : ['params: none']),
  ].join('\n');
}

/** A builder's piece (a clause, a CTE): its text and each placeholder's type. */
export function pieceText(title: string, value: SqlValue): string {
  const { sql, parameters } = render(value);
  const types = Object.entries(parameters).map(([name, type]) => `  ${name}: ${type}`);
  return [
    ...comment([title]),
    sql,
    ...comment(types.length > 0 ? ['placeholders:', ...types] : ['placeholders: none']),
  ].join('\n');
}

/** One snapshot file: a heading, then its sections a blank line apart. */
export function snapshotFile(heading: string[], sections: string[]): string {
  return `${[comment(heading).join('\n'), ...sections].join('\n\n')}\n`;
}

/** A compiled statement as `__snapshots__/query-shapes/<name>.sql` beside the calling test. */
export const queryShapeSnapshot = (name: string, statement: Bound): Promise<void> =>
  expect(boundText(name, statement)).toMatchFileSnapshot(
    `./__snapshots__/query-shapes/${name}.sql`,
  );

/**
 * A migrated chDB holding one fact, for running snapshots: task t1 of `acme` created at `at` in
 * project Apollo, assigned to ana, so statements that group or look labels up answer a row.
 */
export async function engineWithOneFact(at: Date): Promise<ClickHouse> {
  const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
  await migrateClickHouse(ch.client);
  const instant = at.toISOString();
  await ch.client.insert({
    table: 'facts',
    values: [
      {
        fact_id: 1,
        kind: 'task_created',
        business: 'acme',
        task_gid: 't1',
        occurred_at: instant,
        project: 'Apollo',
        assignee: 'ana',
        status: 'open',
        task_created_at: instant,
      },
    ],
    format: 'JSONEachRow',
  });
  return ch;
}

/** What a statement answers on `ch`, each row an object. */
export async function answerOf(ch: ClickHouse, { sql, params }: Bound) {
  const result = await ch.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  return result.json<Record<string, unknown>>();
}
