-- created-by-day
SELECT toString(toDate(occurred_at, {tz:String})) AS day, countIf(kind = 'task_created') AS tasks_created
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
GROUP BY day
ORDER BY day ASC
LIMIT {limit:UInt32};
-- params:
--   tz = "UTC"
--   from = "2026-11-16 00:00:00.000"
--   to = "2026-11-23 00:00:00.000"
--   businesses = ["acme","beta"]
--   limit = 100