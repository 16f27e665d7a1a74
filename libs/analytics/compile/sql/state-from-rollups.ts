import { needs } from '../../catalog/catalog.ts';
import { rollupDef } from '../../sources/rollups.ts';
import { ATS, SLOT_ATS, STATE_BASE, STATE_TO, TZ } from './query-params.ts';
import { cte, type Select, subquery, unionAll } from './select-clauses.ts';
import { type SourceContext, scope, stateLabels } from './source-context.ts';
import { bucketColumns } from './source-expressions.ts';
import { alias, ident, or, raw, type SqlValue, sql } from './sql-value.ts';

/**
 * The due-date changes of `dates` (a map of date → signed count) due before `day`'s date:
 * `arraySum((d, v) -> if(d < toDate(at, {tz:String}), v, 0), due.1, due.2)`.
 */
function overdueBefore(day: SqlValue, dates: string): SqlValue {
  const map = ident(dates);
  return sql`arraySum((d, v) -> if(d < toDate(${day}, ${TZ}), v, 0), ${map}.1, ${map}.2)`;
}

/**
 * The running sum of open tasks over a rollup: its rows already hold the changes summed per
 * slot and label set (with the due dates of the tasks opened and closed, summed per date), so
 * only the slots before the last instant are read, never a fact. Slot instants (`slot_ats`) are
 * the bucket instants moved up to a slot boundary; due dates are still compared with the day
 * of the true instant. With one instant or several, `overdue` is what the catalog sums, and
 * `blocked` (the blocked changes, summed the same way) where the query asks for blocked_tasks, and
 * `live` (the changes of the tasks not deleted, in every status) where it asks for tasks_in_status.
 */
export function rollupStateTable(ctx: SourceContext): SqlValue {
  return ctx.instants === 1 ? rowsAtOneInstant(ctx) : rowsCarriedToInstants(ctx);
}

/**
 * The rows before the last instant: `FROM rollup_… WHERE … AND slot < {state_to:…}`. With a
 * daily base, the whole UTC days before `state_base` come from it, summed over the labels the
 * source does not keep, and the source's own rows from there on:
 *
 *     FROM (SELECT slot, business, status, open_change, due_change, blocked_change
 *       FROM rollup_…_day WHERE … AND slot < {state_base:…}
 *       UNION ALL SELECT … FROM rollup_…_15m WHERE … AND slot >= {state_base:…}
 *       AND slot < {state_to:…})
 */
function rowsRead(ctx: SourceContext): Pick<Select, 'from' | 'where'> {
  if (!ctx.stateBase || ctx.source === 'facts') {
    return { from: ident(ctx.source), where: [scope(ctx), sql`slot < ${STATE_TO}`] };
  }
  const own = rollupDef(ctx.source);
  const columns = [
    'slot',
    ...own.labels,
    'open_change',
    'due_change',
    ...(own.blocked ? ['blocked_change'] : []),
    ...(needs(ctx, 'live_tasks') ? ['live_change'] : []),
  ].map(ident);
  return {
    from: subquery(
      unionAll(
        { columns, from: ident(ctx.stateBase), where: [scope(ctx), sql`slot < ${STATE_BASE}`] },
        {
          columns,
          from: ident(ctx.source),
          where: [scope(ctx), sql`slot >= ${STATE_BASE}`, sql`slot < ${STATE_TO}`],
        },
      ),
    ),
  };
}

/**
 * With one instant, every row read counts toward it once: each row is taken as it stands, with
 * its changes due before that day added up in place, and the state select sums them (a
 * grouping per slot and a carry into later buckets cost a third of the statement on the
 * all-time rollup).
 *
 *     task_at AS (SELECT {starts:…}[1] AS bucket, {ats:…}[1] AS at, project,
 *       open_change AS weight, arraySum((d, v) -> if(d < toDate({ats:…}[1], {tz:String}), v, 0),
 *       due_change.1, due_change.2) AS overdue, blocked_change AS blocked
 *       FROM rollup_… WHERE business IN {businesses:…} AND slot < {state_to:…})
 */
function rowsAtOneInstant(ctx: SourceContext): SqlValue {
  return cte('task_at', {
    columns: [
      ...bucketColumns('1'),
      ...stateLabels(ctx).map(ident),
      raw('open_change AS weight'),
      ...(needs(ctx, 'due_dates')
        ? [alias(overdueBefore(sql`${ATS}[1]`, 'due_change'), 'overdue')]
        : []),
      ...(needs(ctx, 'blocked_at') ? [raw('blocked_change AS blocked')] : []),
      ...(needs(ctx, 'live_tasks') ? [raw('live_change AS live')] : []),
    ],
    ...rowsRead(ctx),
  });
}

/**
 * With several instants, changes are summed per interval between instants and the due dates
 * merged per date (one map per label set), then carried into every later bucket and compared
 * with its instant's day.
 *
 *     task_at AS (SELECT {starts:…}[k] AS bucket, {ats:…}[k] AS at, project, weight,
 *       arraySum((d, v) -> if(d < toDate(at, {tz:String}), v, 0), due.1, due.2) AS overdue,
 *       blocked FROM (
 *         SELECT arrayCount(a -> a <= slot, {slot_ats:…}) AS j, project,
 *           sum(open_change) AS weight, sumMap(due_change) AS due, sum(blocked_change) AS blocked
 *         FROM rollup_… WHERE … AND slot < {state_to:…} GROUP BY j, project
 *         HAVING weight != 0 OR notEmpty(due.1) OR blocked != 0
 *     ) ARRAY JOIN range(j + 1, length({ats:…}) + 1) AS k)
 */
function rowsCarriedToInstants(ctx: SourceContext): SqlValue {
  const labels = stateLabels(ctx).map(ident);
  const due = needs(ctx, 'due_dates');
  const blocked = needs(ctx, 'blocked_at');
  const live = needs(ctx, 'live_tasks');
  const sums: Select = {
    columns: [
      sql`arrayCount(a -> a <= slot, ${SLOT_ATS}) AS j`,
      ...labels,
      raw('sum(open_change) AS weight'),
      ...(due ? [raw('sumMap(due_change) AS due')] : []),
      ...(blocked ? [raw('sum(blocked_change) AS blocked')] : []),
      ...(live ? [raw('sum(live_change) AS live')] : []),
    ],
    ...rowsRead(ctx),
    groupBy: [ident('j'), ...labels],
    having: or([
      raw('weight != 0'),
      due ? raw('notEmpty(due.1)') : null,
      blocked ? raw('blocked != 0') : null,
      live ? raw('live != 0') : null,
    ]),
  };
  return cte('task_at', {
    columns: [
      ...bucketColumns('k'),
      ...labels,
      ident('weight'),
      ...(due ? [alias(overdueBefore(ident('at'), 'due'), 'overdue')] : []),
      ...(blocked ? [ident('blocked')] : []),
      ...(live ? [ident('live')] : []),
    ],
    from: subquery(sums),
    arrayJoin: sql`range(j + 1, length(${ATS}) + 1) AS k`,
  });
}
