-- request: {"metrics":["blocked_tasks"],"dimensions":["week"],"period":"last_30_days","timezone":"Asia/Tokyo"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_business_blocked_15m, facts

-- rows from rollup_business_blocked_15m
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, weight, blocked FROM (SELECT arrayCount(a -> a <= slot, {slot_ats:Array(DateTime64(3, 'UTC'))}) AS j, sum(open_change) AS weight, sum(blocked_change) AS blocked FROM (SELECT slot, business, status, open_change, due_change, blocked_change FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_base:DateTime64(3, 'UTC')} UNION ALL SELECT slot, business, status, open_change, due_change, blocked_change FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {state_base:DateTime64(3, 'UTC')} AND slot < {state_to:DateTime64(3, 'UTC')}) GROUP BY j HAVING weight != 0 OR blocked != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT toString(toMonday(bucket, {tz:String})) AS week, sum(blocked) AS blocked_tasks
FROM task_at
GROUP BY week
HAVING sum(weight) != 0
ORDER BY week ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "Asia/Tokyo"
--   businesses = ["acme"]
--   starts = ["2026-10-26 15:00:00.000","2026-11-01 15:00:00.000","2026-11-08 15:00:00.000","2026-11-15 15:00:00.000","2026-11-22 15:00:00.000"]
--   ats = ["2026-11-01 15:00:00.000","2026-11-08 15:00:00.000","2026-11-15 15:00:00.000","2026-11-22 15:00:00.000","2026-11-25 10:30:00.000"]
--   slot_ats = ["2026-11-01 15:00:00.000","2026-11-08 15:00:00.000","2026-11-15 15:00:00.000","2026-11-22 15:00:00.000","2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   state_base = "2026-11-01 00:00:00.000"
--   limit = 5

-- rows from rollup_business_blocked_15m: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {s1_from:DateTime64(3, 'UTC')} AND slot < {s1_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_to = "2026-11-01 00:00:00.000"
--   s1_from = "2026-11-01 00:00:00.000"
--   s1_to = "2026-11-25 15:00:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
