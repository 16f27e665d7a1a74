-- request: {"metrics":["open_tasks","tasks_created"],"dimensions":["month"],"period":"all_time"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_business_day, rollup_projects_blocked_day, rollup_business_blocked_15m, rollup_labels_day, facts

-- first fact (where the buckets start)
SELECT toUnixTimestamp64Milli(min(occurred_at)) AS first, count() AS facts FROM facts WHERE business IN {businesses:Array(String)};
-- params:
--   businesses = ["acme"]

-- rows from rollup_business_day
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[1] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[1] AS at, open_change AS weight FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')})
SELECT month, max(open_tasks) AS open_tasks, max(tasks_created) AS tasks_created
FROM (
SELECT toString(toStartOfMonth(slot, {tz:String})) AS month, 0 AS open_tasks, sum(created) AS tasks_created
FROM rollup_business_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
GROUP BY month
UNION ALL
SELECT toString(toStartOfMonth(bucket, {tz:String})) AS month, sum(weight) AS open_tasks, 0 AS tasks_created
FROM task_at
GROUP BY month
HAVING sum(weight) != 0
)
GROUP BY month
ORDER BY month ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "1970-01-01 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   starts = ["2026-11-01 00:00:00.000"]
--   ats = ["2026-11-25 10:30:00.000"]
--   state_to = "2026-11-26 00:00:00.000"
--   limit = 1

-- rows from rollup_business_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot < {s1_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "1970-01-01 00:00:00.000"
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
