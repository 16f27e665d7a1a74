-- libs/analytics/compile/metric-sources.ts

-- common tables, flow select and state select of a union on facts
completed_tasks AS (SELECT task_gid FROM facts WHERE business IN {businesses:Array(String)} AND kind = 'task_completed' AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND toString(toMonday(task_created_at, {tz:String})) = toString(toMonday(occurred_at, {tz:String})))
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, weight FROM (SELECT j, project, sum(sign) AS weight FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, project FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_project AS project FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) GROUP BY j, project HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT toString(toMonday(occurred_at, {tz:String})) AS week, project, if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate, 0 AS open_tasks
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY week, project
UNION ALL
SELECT toString(toMonday(bucket, {tz:String})) AS week, project, NULL AS completion_rate, sum(weight) AS open_tasks
FROM task_at
GROUP BY week, project
HAVING sum(weight) != 0
-- placeholders:
--   businesses: Array(String)
--   from: DateTime64(3, 'UTC')
--   to: DateTime64(3, 'UTC')
--   tz: String
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   state_to: DateTime64(3, 'UTC')

-- spans of one entity, on one line
SELECT task_gid, status, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY task_gid ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE kind IN ('task_created', 'task_updated')
-- placeholders: none
