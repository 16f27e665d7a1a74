-- open-and-overdue-by-project
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, due_on, weight FROM (SELECT j, project, due_on, sum(sign) AS weight FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, project, due_on FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_project AS project, previous_due_on AS due_on FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) GROUP BY j, project, due_on HAVING weight != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT project, sum(weight) AS open_tasks, sumIf(weight, due_on < toDate(at, {tz:String})) AS overdue_tasks
FROM task_at
GROUP BY project
HAVING sum(weight) != 0
ORDER BY project ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "Europe/Paris"
--   businesses = ["acme"]
--   starts = ["2026-10-31 23:00:00.000"]
--   ats = ["2026-11-22 15:30:00.000"]
--   state_to = "2026-11-22 15:30:00.000"
--   limit = 100