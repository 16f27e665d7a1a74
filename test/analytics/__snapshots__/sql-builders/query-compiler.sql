-- libs/analytics/compile/query-compiler.ts, now 2026-11-25T10:30:00.000Z

-- tasks created by day, every business, a page of 5
SELECT toString(toDate(occurred_at, {tz:String})) AS day, countIf(kind = 'task_created') AS tasks_created
FROM facts
WHERE occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY day
ORDER BY day ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-11-19 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   limit = 5

-- flow and state merged by week, filtered, the third page of 20
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

-- completion rate and open tasks by assignee
WITH completed_tasks AS (SELECT task_gid FROM facts WHERE kind = 'task_completed' AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}),
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, assignee, weight FROM (SELECT j, assignee, sum(sign) AS weight FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, assignee FROM facts WHERE occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_assignee AS assignee FROM facts WHERE occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) GROUP BY j, assignee HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT assignee, max(completion_rate) AS completion_rate, max(open_tasks) AS open_tasks
FROM (
SELECT assignee, if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate, 0 AS open_tasks
FROM facts
WHERE occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY assignee
UNION ALL
SELECT assignee, NULL AS completion_rate, sum(weight) AS open_tasks
FROM task_at
GROUP BY assignee
HAVING sum(weight) != 0
)
GROUP BY assignee
ORDER BY assignee ASC
LIMIT {limit:UInt32}
SETTINGS short_circuit_function_evaluation = 'force_enable';
-- params:
--   from = "2026-11-01 00:00:00.000"
--   to = "2026-12-01 00:00:00.000"
--   starts = ["2026-11-01 00:00:00.000"]
--   ats = ["2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   limit = 100

-- blocked tasks and completions on a 15-minute rollup with a daily base
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, weight, blocked FROM (SELECT arrayCount(a -> a <= slot, {slot_ats:Array(DateTime64(3, 'UTC'))}) AS j, sum(open_change) AS weight, sum(blocked_change) AS blocked FROM (SELECT slot, business, status, open_change, due_change, blocked_change FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_base:DateTime64(3, 'UTC')} UNION ALL SELECT slot, business, status, open_change, due_change, blocked_change FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {state_base:DateTime64(3, 'UTC')} AND slot < {state_to:DateTime64(3, 'UTC')}) GROUP BY j HAVING weight != 0 OR blocked != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT day, max(blocked_tasks) AS blocked_tasks, max(tasks_completed) AS tasks_completed
FROM (
SELECT toString(toDate(slot, {tz:String})) AS day, 0 AS blocked_tasks, sum(completed) AS tasks_completed
FROM rollup_business_blocked_15m
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
GROUP BY day
UNION ALL
SELECT toString(toDate(bucket, {tz:String})) AS day, sum(blocked) AS blocked_tasks, 0 AS tasks_completed
FROM task_at
GROUP BY day
HAVING sum(weight) != 0
)
GROUP BY day
ORDER BY day ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-11-19 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-11-19 00:00:00.000","2026-11-20 00:00:00.000","2026-11-21 00:00:00.000","2026-11-22 00:00:00.000","2026-11-23 00:00:00.000","2026-11-24 00:00:00.000","2026-11-25 00:00:00.000"]
--   ats = ["2026-11-20 00:00:00.000","2026-11-21 00:00:00.000","2026-11-22 00:00:00.000","2026-11-23 00:00:00.000","2026-11-24 00:00:00.000","2026-11-25 00:00:00.000","2026-11-25 10:30:00.000"]
--   slot_ats = ["2026-11-20 00:00:00.000","2026-11-21 00:00:00.000","2026-11-22 00:00:00.000","2026-11-23 00:00:00.000","2026-11-24 00:00:00.000","2026-11-25 00:00:00.000","2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   state_base = "2026-11-20 00:00:00.000"
--   limit = 100

-- zero-filled by project and week
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, weight FROM (SELECT j, project, sum(sign) AS weight FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, project FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_project AS project FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) GROUP BY j, project HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k),
rows_found AS (
SELECT project, week, max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT project, toString(toMonday(occurred_at, {tz:String})) AS week, countIf(kind = 'task_created') AS tasks_created, 0 AS open_tasks
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY project, week
UNION ALL
SELECT project, toString(toMonday(bucket, {tz:String})) AS week, 0 AS tasks_created, sum(weight) AS open_tasks
FROM task_at
GROUP BY project, week
HAVING sum(weight) != 0
)
GROUP BY project, week
)
SELECT project, week, max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT project, week, tasks_created, open_tasks FROM rows_found
UNION ALL
SELECT project, week, 0 AS tasks_created, if(fill_index > {fill_started:UInt32}, NULL, 0) AS open_tasks FROM (SELECT DISTINCT project FROM rows_found)
ARRAY JOIN {fill:Array(String)} AS week, arrayEnumerate({fill:Array(String)}) AS fill_index
)
GROUP BY project, week
ORDER BY project ASC, week ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-11-01 00:00:00.000"
--   to = "2026-12-01 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-11-01 00:00:00.000","2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000"]
--   ats = ["2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000","2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   fill = ["2026-10-26","2026-11-02","2026-11-09"]
--   fill_started = 3
--   limit = 100
