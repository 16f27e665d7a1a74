-- request: {"metrics":["p50_cycle_time_hours","p90_cycle_time_hours","avg_cycle_time_hours"],"dimensions":["project"],"period":"last_30_days"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_projects_blocked_day, rollup_labels_day, facts

-- rows from rollup_projects_blocked_day
SELECT project, if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(0.5)(cycle_hours)) AS p50_cycle_time_hours, if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(0.9)(cycle_hours)) AS p90_cycle_time_hours, if(sum(completed) = 0, NULL, sum(cycle_hours_sum) / sum(completed)) AS avg_cycle_time_hours
FROM rollup_projects_blocked_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0)
GROUP BY project
ORDER BY project ASC
LIMIT {limit:UInt32};
-- params:
--   from = "2026-10-27 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   limit = 10000

-- rows from rollup_projects_blocked_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(project)) + count() * 36) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}));
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
