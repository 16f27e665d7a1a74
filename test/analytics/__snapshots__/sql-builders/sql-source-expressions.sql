-- libs/analytics/compile/sql/source-expressions.ts

-- every dimension at an instant (weeks from Monday)
concat(substring(formatDateTime(toStartOfHour(occurred_at, {tz:String}), '%Y-%m-%dT%H:%i:%S%z', {tz:String}), 1, 22), ':', substring(formatDateTime(toStartOfHour(occurred_at, {tz:String}), '%Y-%m-%dT%H:%i:%S%z', {tz:String}), 23, 2)) AS hour
toString(toDate(occurred_at, {tz:String})) AS day
toString(toMonday(occurred_at, {tz:String})) AS week
toString(toStartOfMonth(occurred_at, {tz:String})) AS month
toString(toStartOfQuarter(occurred_at, {tz:String})) AS quarter
business
project
assignee
status
-- placeholders:
--   tz: String

-- a week from Sunday
toString(toStartOfWeek(slot, 0, {tz:String})) AS week
-- placeholders:
--   tz: String

-- a condition of every operator, a group among them
project = {f0:String}
project != {f1:String}
status IN {f2:Array(String)}
status NOT IN {f3:Array(String)}
(multiSearchAnyCaseInsensitiveUTF8(assignee, {f4:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(assignee, {f5:Array(String)}))
toString(toMonday(occurred_at, {tz:String})) = {f6:String}
-- placeholders:
--   f0: String
--   f1: String
--   f2: Array(String)
--   f3: Array(String)
--   f4: Array(String)
--   f5: Array(String)
--   tz: String
--   f6: String

-- every metric on facts
countIf(kind = 'task_created') AS tasks_created
countIf(kind = 'task_completed') AS tasks_completed
countIf(kind IN ('task_created', 'task_updated') AND status = 'cancelled' AND previous_status != 'cancelled') AS tasks_cancelled
if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate
if(countIf(kind = 'task_completed') = 0, NULL, avgIf((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS avg_cycle_time_hours
if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.5)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p50_cycle_time_hours
if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.85)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p85_cycle_time_hours
if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.9)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p90_cycle_time_hours
if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.95)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, kind = 'task_completed')) AS p95_cycle_time_hours
if(countIf(kind = 'task_completed' AND started_at IS NOT NULL) = 0, NULL, avgIf((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(assumeNotNull(started_at))) / 3600000, kind = 'task_completed' AND started_at IS NOT NULL)) AS avg_work_time_hours
if(countIf(kind = 'task_completed' AND started_at IS NOT NULL) = 0, NULL, quantileExactInclusiveIf(0.5)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(assumeNotNull(started_at))) / 3600000, kind = 'task_completed' AND started_at IS NOT NULL)) AS p50_work_time_hours
if(countIf(kind = 'task_completed' AND started_at IS NOT NULL) = 0, NULL, quantileExactInclusiveIf(0.85)((toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(assumeNotNull(started_at))) / 3600000, kind = 'task_completed' AND started_at IS NOT NULL)) AS p85_work_time_hours
if(countIf(kind = 'task_completed' AND blocked_ms IS NOT NULL) = 0, NULL, sumIf(assumeNotNull(blocked_ms), kind = 'task_completed' AND blocked_ms IS NOT NULL) / countIf(kind = 'task_completed' AND blocked_ms IS NOT NULL) / 3600000) AS avg_blocked_hours
if(sumIf(toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at), kind = 'task_completed' AND blocked_ms IS NOT NULL) = 0, NULL, 1 - sumIf(assumeNotNull(blocked_ms), kind = 'task_completed' AND blocked_ms IS NOT NULL) / sumIf(toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at), kind = 'task_completed' AND blocked_ms IS NOT NULL)) AS flow_efficiency
countIf(kind = 'dependency_added') AS dependencies_added
countIf(kind = 'dependency_removed') AS dependencies_removed
uniqExactIf(assignee, assignee != '') AS active_assignees
sum(weight) AS open_tasks
sum(live) AS tasks_in_status
if(sum(weight) = 0, NULL, avgIf((toUnixTimestamp64Milli(at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, weight = 1)) AS avg_age_hours
if(sum(weight) = 0, NULL, quantileExactInclusiveIf(0.85)((toUnixTimestamp64Milli(at) - toUnixTimestamp64Milli(task_created_at)) / 3600000, weight = 1)) AS p85_age_hours
sumIf(weight, due_on < toDate(at, {tz:String})) AS overdue_tasks
sumIf(weight, blocked = 1) AS blocked_tasks
-- placeholders:
--   tz: String

-- every metric a rollup keeps
sum(created) AS tasks_created
sum(completed) AS tasks_completed
sum(cancelled) AS tasks_cancelled
if(sum(created) = 0, NULL, sum(completed_in_bucket) / sum(created)) AS completion_rate
if(sum(completed) = 0, NULL, sum(cycle_hours_sum) / sum(completed)) AS avg_cycle_time_hours
if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(0.5)(cycle_hours)) AS p50_cycle_time_hours
if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(0.85)(cycle_hours)) AS p85_cycle_time_hours
if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(0.9)(cycle_hours)) AS p90_cycle_time_hours
if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(0.95)(cycle_hours)) AS p95_cycle_time_hours
if(sum(started) = 0, NULL, sum(work_hours_sum) / sum(started)) AS avg_work_time_hours
if(sum(started) = 0, NULL, quantileExactInclusiveMerge(0.5)(work_hours)) AS p50_work_time_hours
if(sum(started) = 0, NULL, quantileExactInclusiveMerge(0.85)(work_hours)) AS p85_work_time_hours
if(sum(timed) = 0, NULL, sum(blocked_ms_sum) / sum(timed) / 3600000) AS avg_blocked_hours
if(sum(timed_cycle_ms_sum) = 0, NULL, 1 - sum(blocked_ms_sum) / sum(timed_cycle_ms_sum)) AS flow_efficiency
sum(dependencies_added) AS dependencies_added
sum(dependencies_removed) AS dependencies_removed
uniqExactMerge(assignees) AS active_assignees
sum(weight) AS open_tasks
sum(live) AS tasks_in_status
sum(overdue) AS overdue_tasks
sum(blocked) AS blocked_tasks
-- placeholders: none
