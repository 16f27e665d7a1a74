-- request: {"metrics":["tasks_in_status"],"dimensions":["status","week"],"period":"last_90_days"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_business_day, rollup_projects_blocked_day, rollup_business_blocked_15m, rollup_labels_day, facts

-- rows from rollup_business_day
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, status, weight, live FROM (SELECT arrayCount(a -> a <= slot, {slot_ats:Array(DateTime64(3, 'UTC'))}) AS j, status, sum(open_change) AS weight, sum(live_change) AS live FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')} GROUP BY j, status HAVING weight != 0 OR live != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT status, toString(toMonday(bucket, {tz:String})) AS week, sum(live) AS tasks_in_status
FROM task_at
GROUP BY status, week
HAVING sum(weight) != 0 OR sum(live) != 0
ORDER BY status ASC, week ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   businesses = ["acme"]
--   starts = ["2026-08-28 00:00:00.000","2026-08-31 00:00:00.000","2026-09-07 00:00:00.000","2026-09-14 00:00:00.000","2026-09-21 00:00:00.000","2026-09-28 00:00:00.000","2026-10-05 00:00:00.000","2026-10-12 00:00:00.000","2026-10-19 00:00:00.000","2026-10-26 00:00:00.000","2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000"]
--   ats = ["2026-08-31 00:00:00.000","2026-09-07 00:00:00.000","2026-09-14 00:00:00.000","2026-09-21 00:00:00.000","2026-09-28 00:00:00.000","2026-10-05 00:00:00.000","2026-10-12 00:00:00.000","2026-10-19 00:00:00.000","2026-10-26 00:00:00.000","2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000","2026-11-25 10:30:00.000"]
--   slot_ats = ["2026-08-31 00:00:00.000","2026-09-07 00:00:00.000","2026-09-14 00:00:00.000","2026-09-21 00:00:00.000","2026-09-28 00:00:00.000","2026-10-05 00:00:00.000","2026-10-12 00:00:00.000","2026-10-19 00:00:00.000","2026-10-26 00:00:00.000","2026-11-02 00:00:00.000","2026-11-09 00:00:00.000","2026-11-16 00:00:00.000","2026-11-23 00:00:00.000","2026-11-26 00:00:00.000"]
--   state_to = "2026-11-26 00:00:00.000"
--   limit = 10000

-- rows from rollup_business_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 12) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_day WHERE business IN {businesses:Array(String)} AND slot < {s0_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
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
