import { needs } from '../../catalog/catalog.ts';
import type { Select } from './select-clauses.ts';
import { onRollup, type SourceContext } from './source-context.ts';
import {
  dimensionColumns,
  filterConditions,
  groupTerms,
  metricColumns,
} from './source-expressions.ts';
import { ident, raw } from './sql-value.ts';

/**
 * Metrics over the open tasks at each bucket's `at` instant: rows of `task_at`, which the
 * state tables of facts (`state-from-facts.ts`) or of a rollup (`state-from-rollups.ts`) build.
 *
 *     SELECT toString(toMonday(bucket, {tz:String})) AS week, sum(weight) AS open_tasks,
 *       sumIf(weight, blocked = 1) AS blocked_tasks
 *     FROM task_at LEFT JOIN blocked_at USING (at, task_gid)
 *     WHERE project = {f0:String}
 *     GROUP BY week
 *     HAVING sum(weight) != 0
 *
 * The join is there on facts when blocked_tasks is asked for (on a rollup the blocked count is a
 * column of task_at itself); WHERE only with filters; GROUP BY and HAVING only with dimensions.
 */
export function stateSource(ctx: SourceContext): Select {
  const blocked = needs(ctx, 'blocked_at') && !onRollup(ctx);
  return {
    columns: [...dimensionColumns(ctx, 'bucket'), ...metricColumns(ctx, 'state')],
    from: blocked ? raw('task_at LEFT JOIN blocked_at USING (at, task_gid)') : ident('task_at'),
    where: filterConditions(ctx.filters, 'bucket', ctx.weekStart),
    groupBy: groupTerms(ctx),
    // Labels whose tasks have all closed sum to nothing: no row, as for labels never open
    // (with tasks_in_status, whose tasks were all deleted).
    ...(ctx.dimensions.length > 0
      ? {
          having: needs(ctx, 'live_tasks')
            ? raw('sum(weight) != 0 OR sum(live) != 0')
            : raw('sum(weight) != 0'),
        }
      : {}),
  };
}
