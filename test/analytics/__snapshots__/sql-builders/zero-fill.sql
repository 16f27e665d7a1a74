-- libs/analytics/compile/zero-fill.ts

-- the rows joined to every label × bucket
WITH rows_found AS (
SELECT project, week, tasks_created FROM facts
)
SELECT project, week, max(tasks_created) AS tasks_created, max(open_tasks) AS open_tasks
FROM (
SELECT project, week, tasks_created, open_tasks FROM rows_found
UNION ALL
SELECT project, week, 0 AS tasks_created, if(fill_index > {fill_started:UInt32}, NULL, 0) AS open_tasks FROM (SELECT DISTINCT project FROM rows_found)
ARRAY JOIN {fill:Array(String)} AS week, arrayEnumerate({fill:Array(String)}) AS fill_index
)
GROUP BY project, week
-- placeholders:
--   fill_started: UInt32
--   fill: Array(String)
