-- in-status-and-open-by-status
WITH task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, status, weight, live FROM (SELECT j, status, sumIf(sign, is_open) AS weight, sum(sign) AS live FROM (SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, 1 AS sign, status IN ('open', 'in_progress') AS is_open, status FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_created', 'task_updated') UNION ALL SELECT arrayCount(a -> a <= occurred_at, {ats:Array(DateTime64(3, 'UTC'))}) AS j, -1 AS sign, previous_status IN ('open', 'in_progress') AS is_open, previous_status AS status FROM facts WHERE business IN {businesses:Array(String)} AND occurred_at < {state_to:DateTime64(3, 'UTC')} AND kind IN ('task_updated', 'task_deleted')) GROUP BY j, status HAVING weight != 0 OR live != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
SELECT status, sum(live) AS tasks_in_status, sum(weight) AS open_tasks
FROM task_at
GROUP BY status
HAVING sum(weight) != 0 OR sum(live) != 0
ORDER BY status ASC
LIMIT {limit:UInt32};
-- params:
--   businesses = ["acme"]
--   starts = ["2026-11-01 00:00:00.000"]
--   ats = ["2026-11-22 15:30:00.000"]
--   state_to = "2026-11-22 15:30:00.000"
--   limit = 100