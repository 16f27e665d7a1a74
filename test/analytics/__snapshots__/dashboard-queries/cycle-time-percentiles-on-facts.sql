-- request: {"metrics":["p50_cycle_time_hours","p90_cycle_time_hours","avg_cycle_time_hours"],"dimensions":["project"],"period":"last_30_days"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_projects_blocked_day, rollup_labels_day, facts

-- rows from facts
SELECT project, if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.5)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p50_cycle_time_hours, if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.9)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p90_cycle_time_hours, if(countIf(kind = 'task_completed') = 0, NULL, avgIf((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS avg_cycle_time_hours
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY project
ORDER BY project ASC
LIMIT {limit:UInt32};
-- params:
--   from = "2026-10-27 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   limit = 10000

-- rows from facts: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(kind) + length(business) + length(project)) + count() * 16) AS bytes FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at >= {s0_from:DateTime64(3, 'UTC')} AND occurred_at < {s0_to:DateTime64(3, 'UTC')});
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-10-27 00:00:00.000"
--   s0_to = "2026-11-26 00:00:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
