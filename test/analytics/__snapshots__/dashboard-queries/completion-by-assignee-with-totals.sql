-- request: {"metrics":["tasks_created","completion_rate"],"dimensions":["assignee"],"period":"this_month","include":["totals"]}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: facts

-- rows from facts
WITH completed_tasks AS (SELECT task_gid FROM facts WHERE business IN {businesses:Array(String)} AND kind = 'task_completed' AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')})
SELECT assignee, countIf(kind = 'task_created') AS tasks_created, if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY assignee
ORDER BY assignee ASC
LIMIT {limit:UInt32}
SETTINGS short_circuit_function_evaluation = 'force_enable';
-- params:
--   from = "2026-11-01 00:00:00.000"
--   to = "2026-12-01 00:00:00.000"
--   businesses = ["acme"]
--   limit = 10000

-- rows from facts: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(kind) + length(business) + length(task_gid) + length(assignee)) + count() * 8) AS bytes FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at >= {s0_from:DateTime64(3, 'UTC')} AND occurred_at < {s0_to:DateTime64(3, 'UTC')});
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-01 00:00:00.000"
--   s0_to = "2026-12-01 00:00:00.000"

-- totals
SELECT sum(created) AS tasks_created, if(sum(created) = 0, NULL, sum(completed_in_bucket) / sum(created)) AS completion_rate
FROM (SELECT *, arraySum((done, n) -> if(done < {to:DateTime64(3, 'UTC')}, n, 0), completed_by.1, completed_by.2) AS completed_in_bucket FROM rollup_projects_blocked_day)
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0 OR notEmpty(completed_by.1))
LIMIT {limit:UInt32};
-- params:
--   from = "2026-11-01 00:00:00.000"
--   to = "2026-12-01 00:00:00.000"
--   businesses = ["acme"]
--   limit = 1

-- totals: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-01 00:00:00.000"
--   s0_to = "2026-12-01 00:00:00.000"

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
