-- request: {"metrics":["tasks_completed"],"dimensions":["day"],"period":"this_week","compare":"previous_period"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_business_day, rollup_projects_blocked_day, rollup_business_blocked_15m, rollup_labels_day, facts

-- rows from rollup_business_day
SELECT toString(toDate(slot, {tz:String})) AS day, sum(completed) AS tasks_completed
FROM rollup_business_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
GROUP BY day
ORDER BY day ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-11-23 00:00:00.000"
--   to = "2026-11-30 00:00:00.000"
--   businesses = ["acme"]
--   limit = 7

-- rows from rollup_business_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 20) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-23 00:00:00.000"
--   s0_to = "2026-11-30 00:00:00.000"

-- comparison rows for the page [{"day":"2026-11-23"}]
SELECT toString(toDate(slot, {tz:String})) AS day, sum(completed) AS tasks_completed
FROM rollup_business_blocked_15m
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
GROUP BY day
ORDER BY day ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-11-16 00:00:00.000"
--   to = "2026-11-18 10:30:00.000"
--   businesses = ["acme"]
--   limit = 7

-- comparison rows for the page [{"day":"2026-11-23"}]: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 20) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-16 00:00:00.000"
--   s0_to = "2026-11-18 10:30:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {cut:DateTime64(3, 'UTC')} AND occurred_at < {window_end:DateTime64(3, 'UTC')})) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (occurred_at >= {cut:DateTime64(3, 'UTC')} AND occurred_at < {window_end:DateTime64(3, 'UTC')}));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
--   cut = "2026-11-18 10:30:00.000"
--   window_end = "2026-11-18 11:30:00.000"
