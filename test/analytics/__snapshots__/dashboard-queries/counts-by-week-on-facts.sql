-- request: {"metrics":["tasks_created","tasks_completed"],"dimensions":["week"],"period":"last_90_days"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_business_day, rollup_projects_blocked_day, rollup_business_blocked_15m, rollup_labels_day, facts

-- rows from facts
SELECT toString(toMonday(occurred_at, {tz:String})) AS week, countIf(kind = 'task_created') AS tasks_created, countIf(kind = 'task_completed') AS tasks_completed
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY week
ORDER BY week ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-08-28 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   limit = 14

-- rows from facts: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(kind) + length(business)) + count() * 8) AS bytes FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at >= {s0_from:DateTime64(3, 'UTC')} AND occurred_at < {s0_to:DateTime64(3, 'UTC')});
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-08-28 00:00:00.000"
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
