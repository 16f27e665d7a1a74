-- libs/analytics/compile/sql/state-select.ts

-- blocked tasks on facts, filtered
SELECT toString(toMonday(bucket, {tz:String})) AS week, project, sumIf(weight, blocked = 1) AS blocked_tasks
FROM task_at LEFT JOIN blocked_at USING (at, task_gid)
WHERE project = {f0:String} AND status NOT IN {f1:Array(String)}
GROUP BY week, project
HAVING sum(weight) != 0
-- placeholders:
--   tz: String
--   f0: String
--   f1: Array(String)

-- tasks in status on a rollup
SELECT status, sum(live) AS tasks_in_status
FROM task_at
GROUP BY status
HAVING sum(weight) != 0 OR sum(live) != 0
-- placeholders: none
