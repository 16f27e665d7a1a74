-- libs/analytics/compile/sql/state-from-rollups.ts

-- one instant, every row counted once
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[1] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[1] AS at, project, open_change AS weight, arraySum((d, v) -> if(d < toDate({ats:Array(DateTime64(3, 'UTC'))}[1], {tz:String}), v, 0), due_change.1, due_change.2) AS overdue FROM rollup_labels_all WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')})
-- placeholders:
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   tz: String
--   businesses: Array(String)
--   state_to: DateTime64(3, 'UTC')

-- several instants, changes carried into later buckets
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, project, weight, arraySum((d, v) -> if(d < toDate(at, {tz:String}), v, 0), due.1, due.2) AS overdue, blocked FROM (SELECT arrayCount(a -> a <= slot, {slot_ats:Array(DateTime64(3, 'UTC'))}) AS j, project, sum(open_change) AS weight, sumMap(due_change) AS due, sum(blocked_change) AS blocked FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_to:DateTime64(3, 'UTC')} GROUP BY j, project HAVING weight != 0 OR notEmpty(due.1) OR blocked != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
-- placeholders:
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   tz: String
--   slot_ats: Array(DateTime64(3, 'UTC'))
--   businesses: Array(String)
--   state_to: DateTime64(3, 'UTC')

-- several instants with a daily base, tasks in every status
task_at AS (SELECT {starts:Array(DateTime64(3, 'UTC'))}[k] AS bucket, {ats:Array(DateTime64(3, 'UTC'))}[k] AS at, status, weight, live FROM (SELECT arrayCount(a -> a <= slot, {slot_ats:Array(DateTime64(3, 'UTC'))}) AS j, status, sum(open_change) AS weight, sum(live_change) AS live FROM (SELECT slot, business, status, open_change, due_change, blocked_change, live_change FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {state_base:DateTime64(3, 'UTC')} UNION ALL SELECT slot, business, status, open_change, due_change, blocked_change, live_change FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {state_base:DateTime64(3, 'UTC')} AND slot < {state_to:DateTime64(3, 'UTC')}) GROUP BY j, status HAVING weight != 0 OR live != 0) ARRAY JOIN range(j + 1, length({ats:Array(DateTime64(3, 'UTC'))}) + 1) AS k)
-- placeholders:
--   starts: Array(DateTime64(3, 'UTC'))
--   ats: Array(DateTime64(3, 'UTC'))
--   slot_ats: Array(DateTime64(3, 'UTC'))
--   businesses: Array(String)
--   state_base: DateTime64(3, 'UTC')
--   state_to: DateTime64(3, 'UTC')
