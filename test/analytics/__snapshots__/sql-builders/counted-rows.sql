-- libs/analytics/compile/counted-rows.ts, now 2026-11-25T10:30:00.000Z

-- rows with their count, settings kept last
SELECT *, count() OVER () AS total_rows FROM (
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[i] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[i] AS at, task_gid, business, project, assignee, status, due_on, 1 AS weight FROM (SELECT task_gid, kind, business, project, assignee, status, due_on, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE business IN {businesses:Array(String)} AND kind IN ('task_created', 'task_updated', 'task_completed', 'task_deleted') AND occurred_at < {state_to:DateTime64(3, 'UTC')}) ARRAY JOIN arrayFilter(i -> {ats:Array(DateTime64(3, 'UTC'))}[i] > occurred_at AND {ats:Array(DateTime64(3, 'UTC'))}[i] <= next_at, arrayEnumerate({ats:Array(DateTime64(3, 'UTC'))})) AS i WHERE kind != 'task_deleted' AND status IN ('open', 'in_progress')),
edge_at AS (SELECT {ats:Array(DateTime64(3, 'UTC'))}[i] AS at, task_gid, dependency_gid FROM (SELECT task_gid, dependency_gid, kind, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid, dependency_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE business IN {businesses:Array(String)} AND kind IN ('dependency_added', 'dependency_removed') AND occurred_at < {state_to:DateTime64(3, 'UTC')}) ARRAY JOIN arrayFilter(i -> {ats:Array(DateTime64(3, 'UTC'))}[i] > occurred_at AND {ats:Array(DateTime64(3, 'UTC'))}[i] <= next_at, arrayEnumerate({ats:Array(DateTime64(3, 'UTC'))})) AS i WHERE kind = 'dependency_added'),
blocked_at AS (SELECT DISTINCT edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked FROM edge_at INNER JOIN task_at AS dependency ON dependency.at = edge_at.at AND dependency.task_gid = edge_at.dependency_gid)
SELECT week, max(tasks_created) AS tasks_created, max(blocked_tasks) AS blocked_tasks
FROM (
SELECT toString(toMonday(occurred_at, {tz:String})) AS week, countIf(kind = 'task_created') AS tasks_created, 0 AS blocked_tasks
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND project = {f0:String}
GROUP BY week
UNION ALL
SELECT toString(toMonday(bucket, {tz:String})) AS week, 0 AS tasks_created, sumIf(weight, blocked = 1) AS blocked_tasks
FROM task_at LEFT JOIN blocked_at USING (at, task_gid)
WHERE project = {f0:String}
GROUP BY week
HAVING sum(weight) != 0
)
GROUP BY week
ORDER BY blocked_tasks DESC, week ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt64}
)
SETTINGS join_algorithm = 'partial_merge';
-- params:
--   tz = "UTC"
--   from = "2026-10-27 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-10-27 00:00:00.000","2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000"]
--   ats = ["2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000","2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   f0 = "Apollo"
--   limit = 100
--   offset = 20
