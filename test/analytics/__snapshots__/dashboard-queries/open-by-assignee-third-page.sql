-- request: {"metrics":["open_tasks","overdue_tasks"],"dimensions":["assignee"],"period":"today","order_by":[{"field":"open_tasks","direction":"desc"}],"limit":20,"offset":40}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_labels_all, rollup_labels_month, rollup_labels_day, facts

-- rows from rollup_labels_all
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[1] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[1] AS at, assignee, open_change AS weight, arraySum((d, v) -> if(d < toDate({ats:Array(DateTime64(3, 'UTC'))}[1], {tz:String}), v, 0), due_change.1, due_change.2) AS overdue FROM rollup_labels_all WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')})
SELECT assignee, sum(weight) AS open_tasks, sum(overdue) AS overdue_tasks
FROM task_at
GROUP BY assignee
HAVING sum(weight) != 0
ORDER BY open_tasks DESC, assignee ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt64};
-- params:
--   tz = "UTC"
--   businesses = ["acme"]
--   starts = ["2026-11-25 00:00:00.000"]
--   ats = ["2026-11-25 10:30:00.000"]
--   state_to = "2026-11-25 10:30:00.000"
--   limit = 20
--   offset = 40

-- rows from rollup_labels_all: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(assignee)) + count() * 20) AS bytes FROM (SELECT DISTINCT business, slot, project, assignee, status FROM rollup_labels_all WHERE business IN {businesses:Array(String)} AND slot < {s0_to:DateTime64(3, 'UTC')}));
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
