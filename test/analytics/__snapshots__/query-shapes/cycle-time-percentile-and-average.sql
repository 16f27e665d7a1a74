-- cycle-time-percentile-and-average
SELECT if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.9)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p90_cycle_time_hours, if(countIf(kind = 'task_completed') = 0, NULL, avgIf((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS avg_cycle_time_hours
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
LIMIT {limit:UInt32};
-- params:
--   from = "2026-10-24 00:00:00.000"
--   to = "2026-11-23 00:00:00.000"
--   businesses = ["acme"]
--   limit = 100