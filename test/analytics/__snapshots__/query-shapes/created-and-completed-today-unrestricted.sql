-- created-and-completed-today-unrestricted
SELECT countIf(kind = 'task_created') AS tasks_created, countIf(kind = 'task_completed') AS tasks_completed
FROM facts
WHERE occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
LIMIT {limit:UInt32};
-- params:
--   from = "2026-11-22 00:00:00.000"
--   to = "2026-11-23 00:00:00.000"
--   limit = 5