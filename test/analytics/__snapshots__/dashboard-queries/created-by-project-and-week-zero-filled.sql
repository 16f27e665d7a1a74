-- request: {"metrics":["tasks_created","open_tasks"],"dimensions":["project","week"],"period":"last_30_days","fill":"zero"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_projects_blocked_day, rollup_labels_day, facts

-- rows from rollup_projects_blocked_day
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, weight FROM (SELECT arrayCount(a -> a <= slot, {slot_ats:Array(DateTime64(3, 'UTC'))}) AS j, project, sum(open_change) AS weight FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')} GROUP BY j, project HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k),
rows_found AS (
SELECT project, week, max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT project, toString(toMonday(slot, {tz:String})) AS week, sum(created) AS tasks_created, 0 AS open_tasks
FROM rollup_projects_blocked_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
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
--   from = "2026-10-27 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-10-27 00:00:00.000","2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000"]
--   ats = ["2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000","2026-11-25 10:30:00.000"]
--   slot_ats = ["2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000","2026-11-26 00:00:00.000"]
--   state_to = "2026-11-26 00:00:00.000"
--   fill = ["2026-10-26","2026-11-02","2026-11-09","2026-11-16","2026-11-23"]
--   fill_started = 5
--   limit = 10000

-- rows from rollup_projects_blocked_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(project)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(project)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {s1_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-10-27 00:00:00.000"
--   s0_to = "2026-11-26 00:00:00.000"
--   s1_to = "2026-11-26 00:00:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
