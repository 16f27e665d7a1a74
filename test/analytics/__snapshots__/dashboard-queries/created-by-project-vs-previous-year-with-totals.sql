-- request: {"metrics":["tasks_created","open_tasks"],"dimensions":["project"],"period":"this_month","compare":"previous_year","include":["totals"]}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_projects_blocked_day, rollup_labels_day, facts

-- rows from rollup_projects_blocked_day
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[1] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[1] AS at, project, open_change AS weight FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')})
SELECT project, max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT project, sum(created) AS tasks_created, 0 AS open_tasks
FROM rollup_projects_blocked_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
GROUP BY project
UNION ALL
SELECT project, 0 AS tasks_created, sum(weight) AS open_tasks
FROM task_at
GROUP BY project
HAVING sum(weight) != 0
)
GROUP BY project
ORDER BY project ASC
LIMIT {limit:UInt32};
-- params:
--   from = "2026-11-01 00:00:00.000"
--   to = "2026-12-01 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-11-01 00:00:00.000"]
--   ats = ["2026-11-25 10:30:00.000"]
--   state_to = "2026-11-26 00:00:00.000"
--   limit = 10000

-- rows from rollup_projects_blocked_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(project)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(project)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {s1_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-01 00:00:00.000"
--   s0_to = "2026-12-01 00:00:00.000"
--   s1_to = "2026-12-01 00:00:00.000"

-- totals
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[1] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[1] AS at, open_change AS weight FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')})
SELECT max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT sum(created) AS tasks_created, 0 AS open_tasks
FROM rollup_business_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
UNION ALL
SELECT 0 AS tasks_created, sum(weight) AS open_tasks
FROM task_at
)
LIMIT {limit:UInt32};
-- params:
--   from = "2026-11-01 00:00:00.000"
--   to = "2026-12-01 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-11-01 00:00:00.000"]
--   ats = ["2026-11-25 10:30:00.000"]
--   state_to = "2026-11-26 00:00:00.000"
--   limit = 1

-- totals: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot < {s1_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-01 00:00:00.000"
--   s0_to = "2026-12-01 00:00:00.000"
--   s1_to = "2026-12-01 00:00:00.000"

-- comparison totals
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[1] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[1] AS at, open_change AS weight FROM (SELECT slot, business, status, open_change, due_change, blocked_change FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_base:DateTime64(3, 'UTC')} UNION ALL SELECT slot, business, status, open_change, due_change, blocked_change FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {state_base:DateTime64(3, 'UTC')} AND slot < {state_to:DateTime64(3, 'UTC')}))
SELECT max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT sum(created) AS tasks_created, 0 AS open_tasks
FROM rollup_business_blocked_15m
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
UNION ALL
SELECT 0 AS tasks_created, sum(weight) AS open_tasks
FROM task_at
)
LIMIT {limit:UInt32};
-- params:
--   from = "2025-11-01 00:00:00.000"
--   to = "2025-11-25 10:30:00.000"
--   businesses = ["acme"]
--   starts = ["2025-11-01 00:00:00.000"]
--   ats = ["2025-11-25 10:30:00.000"]
--   state_to = "2025-11-25 10:30:00.000"
--   state_base = "2025-11-25 00:00:00.000"
--   limit = 1

-- comparison totals: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 44) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 44) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {s1_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 44) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {s2_from:DateTime64(3, 'UTC')} AND slot < {s2_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2025-11-01 00:00:00.000"
--   s0_to = "2025-11-25 10:30:00.000"
--   s1_to = "2025-11-25 00:00:00.000"
--   s2_from = "2025-11-25 00:00:00.000"
--   s2_to = "2025-11-25 10:30:00.000"

-- comparison rows for the page [{"project":"Apollo"},{"project":null}]
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, weight FROM (SELECT j, project, sum(sign) AS weight FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, project FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_project AS project FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) GROUP BY j, project HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT project, max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT project, countIf(kind = 'task_created') AS tasks_created, 0 AS open_tasks
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND project IN {f0:Array(String)}
GROUP BY project
UNION ALL
SELECT project, 0 AS tasks_created, sum(weight) AS open_tasks
FROM task_at
WHERE project IN {f0:Array(String)}
GROUP BY project
HAVING sum(weight) != 0
)
GROUP BY project
ORDER BY project ASC
LIMIT {limit:UInt32};
-- params:
--   from = "2025-11-01 00:00:00.000"
--   to = "2025-11-25 10:30:00.000"
--   businesses = ["acme"]
--   starts = ["2025-11-01 00:00:00.000"]
--   ats = ["2025-11-25 10:30:00.000"]
--   state_to = "2025-11-25 10:30:00.000"
--   f0 = ["Apollo",""]
--   limit = 10000

-- comparison rows for the page [{"project":"Apollo"},{"project":null}]: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(kind) + length(business) + length(project) + length(status) + length(previous_status) + length(previous_project)) + count() * 8) AS bytes FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at >= {s0_from:DateTime64(3, 'UTC')} AND occurred_at < {s0_to:DateTime64(3, 'UTC')} UNION ALL SELECT count() AS rows, toUInt64(sum(length(kind) + length(business) + length(project) + length(status) + length(previous_status) + length(previous_project)) + count() * 8) AS bytes FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {s1_to:DateTime64(3, 'UTC')});
-- params:
--   businesses = ["acme"]
--   s0_from = "2025-11-01 00:00:00.000"
--   s0_to = "2025-11-25 10:30:00.000"
--   s1_to = "2025-11-25 10:30:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {cut:DateTime64(3, 'UTC')} AND occurred_at < {window_end:DateTime64(3, 'UTC')})) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (occurred_at >= {cut:DateTime64(3, 'UTC')} AND occurred_at < {window_end:DateTime64(3, 'UTC')}));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
--   cut = "2025-11-25 10:30:00.000"
--   window_end = "2025-11-25 11:30:00.000"
