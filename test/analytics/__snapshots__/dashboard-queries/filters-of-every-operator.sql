-- request: {"metrics":["tasks_created","tasks_completed"],"dimensions":["project"],"period":"last_7_days","filters":[{"dimension":"project","op":"in","values":["Apollo","Zephyr"]},{"dimension":"status","op":"not_in","values":["cancelled"]},{"dimension":"assignee","op":"neq","values":[null]},{"any":[{"dimension":"assignee","op":"eq","values":["ana"]},{"dimension":"assignee","op":"contains","values":["bot","ci"]}]},{"dimension":"project","op":"not_contains","values":["archive"]}]}
-- now: 2026-11-25T10:30:00.000Z, businesses: ["acme"]
-- exact sources: rollup_labels_day, facts

-- rows from rollup_labels_day
SELECT project, sum(created) AS tasks_created, sum(completed) AS tasks_completed
FROM rollup_labels_day
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND project IN {f0:Array(String)} AND status NOT IN {f1:Array(String)} AND assignee != {f2:String} AND (assignee = {f3:String} OR multiSearchAnyCaseInsensitiveUTF8(assignee, {f4:Array(String)})) AND NOT multiSearchAnyCaseInsensitiveUTF8(project, {f5:Array(String)}) AND (facts > 0)
GROUP BY project
ORDER BY project ASC
LIMIT {limit:UInt32};
-- params:
--   from = "2026-11-19 00:00:00.000"
--   to = "2026-11-26 00:00:00.000"
--   businesses = ["acme"]
--   f0 = ["Apollo","Zephyr"]
--   f1 = ["cancelled"]
--   f2 = ""
--   f3 = "ana"
--   f4 = ["bot","ci"]
--   f5 = ["archive"]
--   limit = 10000

-- rows from rollup_labels_day: own reads
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(project) + length(assignee) + length(status)) + count() * 28) AS bytes FROM (SELECT DISTINCT business, slot, project, assignee, status FROM rollup_labels_day WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-19 00:00:00.000"
--   s0_to = "2026-11-26 00:00:00.000"

-- labels the filters name
SELECT DISTINCT 'project' AS dimension, project AS label FROM facts WHERE business IN {businesses:Array(String)} AND project IN {k0:Array(String)}
UNION ALL
SELECT DISTINCT 'assignee' AS dimension, assignee AS label FROM facts WHERE business IN {businesses:Array(String)} AND assignee IN {k1:Array(String)};
-- params:
--   businesses = ["acme"]
--   k0 = ["Apollo","Zephyr"]
--   k1 = ["ana"]

-- horizon (how long the answer holds)
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]
