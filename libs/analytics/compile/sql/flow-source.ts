import { needs, timeDimension } from '../../catalog/catalog.ts';
import { FROM, TO } from './query-params.ts';
import { cte, type Select, subquery } from './select-clauses.ts';
import { onRollup, type SourceContext, scope } from './source-context.ts';
import {
  dimensionAt,
  dimensionColumns,
  filterConditions,
  groupTerms,
  metricColumns,
} from './source-expressions.ts';
import { alias, and, ident, raw, type SqlValue, sql } from './sql-value.ts';

/** The column a source's rows are placed in time by. */
const instantOf = (ctx: SourceContext) => (onRollup(ctx) ? 'slot' : 'occurred_at');

/**
 * Metrics over the facts that happened inside [from, to). On a rollup, rows holding only a
 * closed state's labels (no fact of their own) stay out, or they would add empty groups.
 *
 *     SELECT toString(toDate(occurred_at, {tz:String})) AS day,
 *       countIf(kind = 'task_created') AS tasks_created
 *     FROM facts
 *     WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')}
 *       AND occurred_at < {to:DateTime64(3, 'UTC')} AND project = {f0:String}
 *     GROUP BY day
 *
 * On a rollup the instant is `slot`, the metrics are the catalog's rollup SQL, and the WHERE
 * ends with `AND (facts > 0)`; with completion_rate it reads
 * `FROM (SELECT *, arraySum(…) AS completed_in_bucket FROM rollup_…)` and ends with
 * `AND (facts > 0 OR notEmpty(completed_by.1))`; with work or blocked times the condition also
 * takes `OR started > 0 OR timed > 0`.
 */
export function flowSource(ctx: SourceContext): Select {
  const instant = instantOf(ctx);
  const column = ident(instant);
  const completions = onRollup(ctx) && needs(ctx, 'completed_tasks');
  const table = ident(ctx.source);
  const from = completions
    ? subquery({
        columns: [raw('*'), alias(completedInBucket(ctx), 'completed_in_bucket')],
        from: table,
      })
    : table;
  // Until parts merge, a first completion's credit is a row of its own without facts; its
  // creation's row holds the same slot and labels, so it adds no group of its own.
  // Work and blocked times ride on their completion's row (one view a rollup since 0059).
  const own = raw(
    `(${['facts > 0', completions ? 'notEmpty(completed_by.1)' : null]
      .filter(Boolean)
      .join(' OR ')})`,
  );
  return {
    columns: [...dimensionColumns(ctx, instant), ...metricColumns(ctx, 'flow')],
    from,
    where: [
      scope(ctx),
      sql`${column} >= ${FROM}`,
      sql`${column} < ${TO}`,
      ...filterConditions(ctx.filters, instant, ctx.weekStart),
      onRollup(ctx) ? own : null,
    ],
    groupBy: groupTerms(ctx),
  };
}

/**
 * A rollup row's creations that were first completed before the row's bucket ends: its
 * `completed_by` slots that fall in the same bucket as its own slot (a later slot, since no task
 * is completed before it is created) and before the period's end. The planner sends a query
 * here only when every bucket boundary is a slot boundary, so comparing slots is exact.
 *
 *     arraySum((done, n) -> if(done < {to:DateTime64(3, 'UTC')}
 *       AND toString(toDate(done, {tz:String})) = toString(toDate(slot, {tz:String})), n, 0),
 *       completed_by.1, completed_by.2)
 */
function completedInBucket(ctx: SourceContext): SqlValue {
  const time = timeDimension(ctx);
  const sameBucket = time
    ? sql`${dimensionAt(time, 'done', ctx.weekStart)} = ${dimensionAt(time, 'slot', ctx.weekStart)}`
    : null;
  const counted = and([sql`done < ${TO}`, sameBucket]);
  return sql`arraySum((done, n) -> if(${counted}, n, 0), completed_by.1, completed_by.2)`;
}

/**
 * The tasks completion_rate counts as completed, on facts (a rollup counts them per row):
 *
 *     completed_tasks AS (SELECT task_gid FROM facts WHERE business IN {businesses:Array(String)}
 *       AND kind = 'task_completed' AND occurred_at >= {from:…} AND occurred_at < {to:…}
 *       AND toString(toDate(task_created_at, {tz:String}))
 *         = toString(toDate(occurred_at, {tz:String})))
 *
 * A task created in the period is completed after its creation: completions before the period
 * cannot count, so only the period's own completions are read. Each carries its task's creation
 * instant (`task_created_at`, on every fact the write side has produced), so one in another
 * bucket than its creation is left out here and the set holds bare task ids: looking up
 * (task, bucket) tuples instead took more than twice as long at 100M facts.
 */
export function completedTasksTable(ctx: SourceContext): SqlValue {
  const time = timeDimension(ctx);
  const sameBucket = time
    ? sql`${dimensionAt(time, 'task_created_at', ctx.weekStart)} = ${dimensionAt(time, 'occurred_at', ctx.weekStart)}`
    : null;
  return cte('completed_tasks', {
    columns: [ident('task_gid')],
    from: ident('facts'),
    where: [
      scope(ctx),
      raw("kind = 'task_completed'"),
      sql`occurred_at >= ${FROM}`,
      sql`occurred_at < ${TO}`,
      sameBucket,
    ],
  });
}
