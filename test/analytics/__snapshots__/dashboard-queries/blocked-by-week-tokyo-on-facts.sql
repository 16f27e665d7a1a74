-- request: {"metrics":["blocked_tasks"],"dimensions":["week"],"period":"last_30_days","timezone":"Asia/Tokyo"}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_business_blocked_15m, facts

-- rows from facts
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[i] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[i] AS at, task_gid, business, project, assignee, status, due_on, 1 AS weight FROM (SELECT task_gid, kind, business, project, assignee, status, due_on, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE business IN {businesses:Array(String)} AND kind IN ('task_created', 'task_updated', 'task_completed', 'task_deleted') AND occurred_at < {state_to:DateTime64(3, 'UTC')}) ARRAY JOIN arrayFilter(i -> {ats:Array(DateTime64(3, 'UTC'))}[i] > occurred_at AND {ats:Array(DateTime64(3, 'UTC'))}[i] <= next_at, arrayEnumerate({ats:Array(DateTime64(3, 'UTC'))})) AS i WHERE kind != 'task_deleted' AND status IN ('open', 'in_progress')),
edge_at AS (SELECT {ats:Array(DateTime64(3, 'UTC'))}[i] AS at, task_gid, dependency_gid FROM (SELECT task_gid, dependency_gid, kind, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid, dependency_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE business IN {businesses:Array(String)} AND kind IN ('dependency_added', 'dependency_removed') AND occurred_at < {state_to:DateTime64(3, 'UTC')}) ARRAY JOIN arrayFilter(i -> {ats:Array(DateTime64(3, 'UTC'))}[i] > occurred_at AND {ats:Array(DateTime64(3, 'UTC'))}[i] <= next_at, arrayEnumerate({ats:Array(DateTime64(3, 'UTC'))})) AS i WHERE kind = 'dependency_added'),
blocked_at AS (SELECT DISTINCT edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked FROM edge_at INNER JOIN task_at AS dependency ON dependency.at = edge_at.at AND dependency.task_gid = edge_at.dependency_gid)
SELECT toString(toMonday(bucket, {tz:String})) AS week, sumIf(weight, blocked = 1) AS blocked_tasks
FROM task_at LEFT JOIN blocked_at USING (at, task_gid)
GROUP BY week
HAVING sum(weight) != 0
ORDER BY week ASC
LIMIT {limit:UInt32}
SETTINGS join_algorithm = 'partial_merge';
-- params:
--   tz = "Asia/Tokyo"
--   businesses = ["acme"]
--   starts = ["2026-10-26 15:00:00.000","2026-11-01 15:00:00.000","2026-11-08 15:00:00.000","2026-11-15 15:00:00.000","2026-11-22 15:00:00.000"]
--   ats = ["2026-11-01 15:00:00.000","2026-11-08 15:00:00.000","2026-11-15 15:00:00.000","2026-11-22 15:00:00.000","2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   limit = 5

-- rows from facts: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(kind) + length(business) + length(task_gid) + length(project) + length(assignee) + length(status) + length(dependency_gid)) + count() * 20) AS bytes FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {s0_to:DateTime64(3, 'UTC')});
-- params:
--   businesses = ["acme"]
--   s0_to = "2026-11-25 15:00:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
