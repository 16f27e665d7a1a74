-- libs/analytics/compile/sql/flow-source.ts

-- flow on facts, filtered
SELECT toString(toMonday(occurred_at, {tz:String})) AS week, project, countIf(kind = 'task_created') AS tasks_created, if(countIf(kind = 'task_completed') = 0, NULL, avgIf((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS avg_cycle_time_hours
FROM facts
WHERE business IN {businesses:Array(String)} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND project = {f0:String} AND status NOT IN {f1:Array(String)}
GROUP BY week, project
-- placeholders:
--   tz: String
--   businesses: Array(String)
--   from: DateTime64(3, 'UTC')
--   to: DateTime64(3, 'UTC')
--   f0: String
--   f1: Array(String)

-- flow on a rollup keeping completions and work times
SELECT toString(toDate(slot, {tz:String})) AS day, if(sum(created) = 0, NULL, sum(completed_in_bucket) / sum(created)) AS completion_rate, if(sum(started) = 0, NULL, sum(work_hours_sum) / sum(started)) AS avg_work_time_hours
FROM (SELECT *, arraySum((done, n) -> if(done < {to:DateTime64(3, 'UTC')} AND toString(toDate(done, {tz:String})) = toString(toDate(slot, {tz:String})), n, 0), completed_by.1, completed_by.2) AS completed_in_bucket FROM rollup_business_blocked_15m)
WHERE business IN {businesses:Array(String)} AND slot >= {from:DateTime64(3, 'UTC')} AND slot < {to:DateTime64(3, 'UTC')} AND (facts > 0 OR notEmpty(completed_by.1))
GROUP BY day
-- placeholders:
--   tz: String
--   to: DateTime64(3, 'UTC')
--   businesses: Array(String)
--   from: DateTime64(3, 'UTC')

-- tasks completed in their creation week, on facts
completed_tasks AS (SELECT task_gid FROM facts WHERE business IN {businesses:Array(String)} AND kind = 'task_completed' AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND toString(toMonday(task_created_at, {tz:String})) = toString(toMonday(occurred_at, {tz:String})))
-- placeholders:
--   businesses: Array(String)
--   from: DateTime64(3, 'UTC')
--   to: DateTime64(3, 'UTC')
--   tz: String
