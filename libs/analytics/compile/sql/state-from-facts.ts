import { needs } from '../../catalog/catalog.ts';
import { ATS, STATE_TO } from './query-params.ts';
import { cte, type Select, subquery, unionAll } from './select-clauses.ts';
import { type SourceContext, scope, stateLabels } from './source-context.ts';
import { bucketColumns } from './source-expressions.ts';
import { alias, and, ident, idents, raw, type SqlValue, sql } from './sql-value.ts';

/** Statuses that count as open. */
export const OPEN = "('open', 'in_progress')";
/** The "no next fact" end of a span: later than any bucket end. */
export const NEVER = "toDateTime64('2299-12-31 00:00:00', 3, 'UTC')";

/**
 * Facts of one entity as spans [occurred_at, next_at): the state each fact left behind.
 *
 *     SELECT task_gid, status, occurred_at, leadInFrame(occurred_at, 1, toDateTime64(…))
 *     OVER (PARTITION BY task_gid ORDER BY occurred_at, fact_id
 *       ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at
 *     FROM facts WHERE kind IN (…) AND occurred_at < {state_to:DateTime64(3, 'UTC')}
 */
export function spanSelect(partition: SqlValue, columns: SqlValue, where: SqlValue): Select {
  const frame = raw('ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING');
  const window = sql`OVER (PARTITION BY ${partition} ORDER BY occurred_at, fact_id ${frame})`;
  return {
    columns: [
      columns,
      ident('occurred_at'),
      alias(sql`leadInFrame(occurred_at, 1, ${raw(NEVER)}) ${window}`, 'next_at'),
    ],
    from: ident('facts'),
    where: [where],
  };
}

/**
 * The bucket indexes whose `at` falls in a span, where that span is the current state:
 * `arrayFilter(i -> {ats:…}[i] > occurred_at AND {ats:…}[i] <= next_at,
 * arrayEnumerate({ats:…})) AS i`.
 */
const IN_SPAN = sql`i -> ${ATS}[i] > occurred_at AND ${ATS}[i] <= next_at`;
const BUCKET_INDEXES = sql`arrayFilter(${IN_SPAN}, arrayEnumerate(${ATS})) AS i`;
const BEFORE_END = sql`occurred_at < ${STATE_TO}`;

/**
 * The tables state metrics read on facts: `task_at` (each open task's labels at each bucket
 * instant, or open counts per label set), and with blocked_tasks `edge_at` and `blocked_at`.
 * Ages need each task's own row (its creation instant), so they replay too.
 */
export function factsStateTables(ctx: SourceContext): SqlValue[] {
  return needs(ctx, 'blocked_at') || needs(ctx, 'task_rows')
    ? replayedTables(ctx)
    : [openTaskCounts(ctx)];
}

/**
 * Each task's and each dependency edge's history replayed to the bucket instants:
 *
 *     task_at AS (SELECT {starts:…}[i] AS bucket, {ats:…}[i] AS at, task_gid, business, project,
 *       assignee, status, due_on, 1 AS weight FROM (<task spans>) ARRAY JOIN arrayFilter(…) AS i
 *       WHERE kind != 'task_deleted' AND status IN ('open', 'in_progress')),
 *     edge_at AS (SELECT {ats:…}[i] AS at, task_gid, dependency_gid FROM (<edge spans>)
 *       ARRAY JOIN arrayFilter(…) AS i WHERE kind = 'dependency_added'),
 *     blocked_at AS (SELECT DISTINCT edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked
 *       FROM edge_at INNER JOIN task_at AS dependency ON …)
 */
function replayedTables(ctx: SourceContext): SqlValue[] {
  // Each task's creation instant, only for the metrics that read it (ages).
  const aged = needs(ctx, 'task_rows') ? ['task_created_at'] : [];
  // Only facts that can change a task's state: an edge fact carries its task's state as it
  // stands, so leaving those out gives the same spans from about a fifth fewer rows to sort.
  const taskSpans = spanSelect(
    ident('task_gid'),
    idents(['task_gid', 'kind', 'business', 'project', 'assignee', 'status', 'due_on', ...aged]),
    and([
      scope(ctx),
      raw("kind IN ('task_created', 'task_updated', 'task_completed', 'task_deleted')"),
      BEFORE_END,
    ]),
  );
  const edgeSpans = spanSelect(
    idents(['task_gid', 'dependency_gid']),
    idents(['task_gid', 'dependency_gid', 'kind']),
    and([scope(ctx), raw("kind IN ('dependency_added', 'dependency_removed')"), BEFORE_END]),
  );
  // With tasks_in_status every task not deleted has a row, `weight` 1 only where it is open.
  const live = needs(ctx, 'live_tasks');
  return [
    cte('task_at', {
      columns: [
        ...bucketColumns('i'),
        idents(['task_gid', 'business', 'project', 'assignee', 'status', 'due_on', ...aged]),
        live ? raw(`status IN ${OPEN} AS weight, 1 AS live`) : raw('1 AS weight'),
      ],
      from: subquery(taskSpans),
      arrayJoin: BUCKET_INDEXES,
      where: [raw("kind != 'task_deleted'"), live ? null : raw(`status IN ${OPEN}`)],
    }),
    cte('edge_at', {
      columns: [alias(sql`${ATS}[i]`, 'at'), idents(['task_gid', 'dependency_gid'])],
      from: subquery(edgeSpans),
      arrayJoin: BUCKET_INDEXES,
      where: [raw("kind = 'dependency_added'")],
    }),
    cte('blocked_at', {
      distinct: true,
      columns: [raw('edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked')],
      from: sql`edge_at INNER JOIN task_at AS dependency ON ${and([
        raw('dependency.at = edge_at.at'),
        raw('dependency.task_gid = edge_at.dependency_gid'),
        live ? raw('dependency.weight = 1') : null,
      ])}`,
    }),
  ];
}

/** Each label a state query reads, and the fact column holding its value before a change. */
const BEFORE = {
  business: 'business',
  project: 'previous_project',
  assignee: 'previous_assignee',
  status: 'previous_status',
  due_on: 'previous_due_on',
} as const;

type Label = keyof typeof BEFORE;

/**
 * Open tasks per label set at each bucket's instant, without replaying any task's history:
 * every change of state adds its new state (+1 if open) and takes away its old one (−1 if it
 * was open), so the open tasks at an instant are the sum over every change before it. Changes
 * are summed per interval between bucket instants, then each sum is carried into every later
 * bucket. Only the labels the query groups or filters by are kept, so the sums stay few.
 *
 *     task_at AS (SELECT {starts:…}[k] AS bucket, {ats:…}[k] AS at, project, weight FROM (
 *       SELECT j, project, sum(sign) AS weight FROM (
 *         SELECT arrayCount(a -> a <= occurred_at, {ats:…}) AS j, 1 AS sign, project FROM facts
 *           WHERE … AND kind IN ('task_created', 'task_updated') AND status IN (…open…)
 *         UNION ALL
 *         SELECT arrayCount(…) AS j, -1 AS sign, previous_project AS project FROM facts
 *           WHERE … AND kind IN ('task_updated', 'task_deleted') AND previous_status IN (…open…)
 *       ) GROUP BY j, project HAVING weight != 0
 *     ) ARRAY JOIN range(j + 1, length({ats:…}) + 1) AS k)
 */
function openTaskCounts(ctx: SourceContext): SqlValue {
  const labels = (Object.keys(BEFORE) as Label[]).filter((label) =>
    label === 'due_on' ? needs(ctx, 'due_dates') : stateLabels(ctx).includes(label),
  );
  // With tasks_in_status every change counts toward `live`, and toward `weight` where it opens.
  const live = needs(ctx, 'live_tasks');
  const interval = sql`arrayCount(a -> a <= occurred_at, ${ATS}) AS j`;
  const change = (sign: string, columns: SqlValue[], kinds: string, status: string): Select => ({
    columns: [
      interval,
      alias(raw(sign), 'sign'),
      ...(live ? [alias(raw(`${status} IN ${OPEN}`), 'is_open')] : []),
      ...columns,
    ],
    from: ident('facts'),
    where: [
      scope(ctx),
      BEFORE_END,
      raw(`kind IN ${kinds}`),
      live ? null : raw(`${status} IN ${OPEN}`),
    ],
  });
  const added = change('1', labels.map(ident), "('task_created', 'task_updated')", 'status');
  const removed = change(
    '-1',
    labels.map((label) =>
      BEFORE[label] === label ? ident(label) : alias(ident(BEFORE[label]), label),
    ),
    "('task_updated', 'task_deleted')",
    'previous_status',
  );
  const keys = [ident('j'), ...labels.map(ident)];
  const sums: Select = {
    columns: [
      ...keys,
      live ? raw('sumIf(sign, is_open) AS weight, sum(sign) AS live') : raw('sum(sign) AS weight'),
    ],
    from: subquery(unionAll(added, removed)),
    groupBy: keys,
    having: live ? raw('weight != 0 OR live != 0') : raw('weight != 0'),
  };
  return cte('task_at', {
    columns: [
      ...bucketColumns('k'),
      ...labels.map(ident),
      ident('weight'),
      ...(live ? [ident('live')] : []),
    ],
    from: subquery(sums),
    arrayJoin: sql`range(j + 1, length(${ATS}) + 1) AS k`,
  });
}
