-- libs/analytics/compile/sql/state-from-facts.ts

-- replayed task and edge spans for blocked tasks
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[i] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[i] AS at, task_gid, business, project, assignee, status, due_on, 1 AS weight FROM (SELECT task_gid, kind, business, project, assignee, status, due_on, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE business IN {businesses:Array(String)} AND kind IN ('task_created', 'task_updated', 'task_completed', 'task_deleted') AND occurred_at < {state_to:DateTime64(3, 'UTC')}) ARRAY JOIN arrayFilter(i -> {ats:Array(DateTime64(3, 'UTC'))}[i] > occurred_at AND {ats:Array(DateTime64(3, 'UTC'))}[i] <= next_at, arrayEnumerate({ats:Array(DateTime64(3, 'UTC'))})) AS i WHERE kind != 'task_deleted' AND status IN ('open', 'in_progress'))
edge_at AS (SELECT {ats:Array(DateTime64(3, 'UTC'))}[i] AS at, task_gid, dependency_gid FROM (SELECT task_gid, dependency_gid, kind, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid, dependency_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE business IN {businesses:Array(String)} AND kind IN ('dependency_added', 'dependency_removed') AND occurred_at < {state_to:DateTime64(3, 'UTC')}) ARRAY JOIN arrayFilter(i -> {ats:Array(DateTime64(3, 'UTC'))}[i] > occurred_at AND {ats:Array(DateTime64(3, 'UTC'))}[i] <= next_at, arrayEnumerate({ats:Array(DateTime64(3, 'UTC'))})) AS i WHERE kind = 'dependency_added')
blocked_at AS (SELECT DISTINCT edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked FROM edge_at INNER JOIN task_at AS dependency ON dependency.at = edge_at.at AND dependency.task_gid = edge_at.dependency_gid)
-- placeholders:
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   businesses: Array(String)
--   state_to: DateTime64(3, 'UTC')

-- open and overdue counts summed from changes
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, due_on, weight FROM (SELECT j, project, due_on, sum(sign) AS weight FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, project, due_on FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_project AS project, previous_due_on AS due_on FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) GROUP BY j, project, due_on HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
-- placeholders:
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   businesses: Array(String)
--   state_to: DateTime64(3, 'UTC')

-- tasks in every status summed from changes
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, status, weight, live FROM (SELECT j, status, sumIf(sign, is_open) AS weight, sum(sign) AS live FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, status IN ('open', 'in_progress') AS is_open, status FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_status IN ('open', 'in_progress') AS is_open, previous_status AS status FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted')) GROUP BY j, status HAVING weight != 0 OR live != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
-- placeholders:
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   businesses: Array(String)
--   state_to: DateTime64(3, 'UTC')

-- a span select
SELECT status, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at
FROM facts
WHERE kind = 'task_updated'
-- placeholders: none
