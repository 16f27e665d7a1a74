-- completion-rate-by-assignee
WITH completed_tasks AS (SELECT task_gid FROM facts WHERE kind = 'task_completed' AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')})
SELECT assignee, if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate
FROM facts
WHERE occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY assignee
ORDER BY assignee ASC
LIMIT {limit:UInt32}
SETTINGS short_circuit_function_evaluation = 'force_enable';
-- params:
--   from = "2026-11-21 00:00:00.000"
--   to = "2026-11-22 00:00:00.000"
--   limit = 100