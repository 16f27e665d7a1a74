-- completion-rate-by-week
WITH completed_tasks AS (SELECT task_gid FROM facts WHERE business IN {businesses:Array(String)} AND kind = 'task_completed' AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND toString(toMonday(task_created_at, {tz:String})) = toString(toMonday(occurred_at, {tz:String})))
SELECT toString(toMonday(occurred_at, {tz:String})) AS week, if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY week
ORDER BY week ASC
LIMIT {limit:UInt32}
SETTINGS short_circuit_function_evaluation = 'force_enable';
-- params:
--   tz = "Asia/Kolkata"
--   from = "2026-11-08 18:30:00.000"
--   to = "2026-11-15 18:30:00.000"
--   businesses = ["acme"]
--   limit = 100