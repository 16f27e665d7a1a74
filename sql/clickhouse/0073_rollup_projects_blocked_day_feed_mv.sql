-- The rollup's one view, so an insert into facts runs one view per rollup, not one per kind
-- of column. Each fact adds a row under its new labels (its flows, its completion's work and
-- blocked times, +1 open if it leaves the task open, +1 live unless it deletes the task) and,
-- when it changes or deletes a task, one under the labels before it (-1 live; -1 open if the
-- task was open).
-- A task's first completion also adds a row under the slot and labels of the task's creation,
-- naming the slot it was completed in (side 2); each blocked change the fact lists adds a row
-- under its labels (sides 3 and up).
CREATE MATERIALIZED VIEW IF NOT EXISTS rollup_projects_blocked_day_feed_mv TO rollup_projects_blocked_day AS
SELECT
    business,
    toStartOfDay(if(side = 2, task_created_at, occurred_at), 'UTC') AS slot,
    label_project AS project,
    label_status AS status,
    countIf(side = 1) AS facts,
    countIf(side = 1 AND kind = 'task_created') AS created,
    countIf(side = 1 AND kind = 'task_completed') AS completed,
    countIf(side = 1 AND kind IN ('task_created', 'task_updated') AND status = 'cancelled' AND previous_status != 'cancelled') AS cancelled,
    countIf(side = 1 AND kind = 'dependency_added') AS dependencies_added,
    countIf(side = 1 AND kind = 'dependency_removed') AS dependencies_removed,
    sumIf(cycle, side = 1 AND kind = 'task_completed') AS cycle_hours_sum,
    quantileExactInclusiveStateIf(0.5)(cycle, side = 1 AND kind = 'task_completed') AS cycle_hours,
    uniqExactStateIf(assignee, side = 1 AND assignee != '') AS assignees,
    sum(change) AS open_change,
    sumMap(if(change != 0 AND label_due IS NOT NULL, [assumeNotNull(label_due)], []), if(change != 0 AND label_due IS NOT NULL, [change], [])) AS due_change,
    sumMap(if(side = 2, [toDateTime(toStartOfDay(occurred_at, 'UTC'), 'UTC')], []), if(side = 2, [toUInt64(1)], [])) AS completed_by,
    sum(blocked) AS blocked_change,
    countIf(completion AND started_at IS NOT NULL) AS started,
    sumIf(work, completion AND started_at IS NOT NULL) AS work_hours_sum,
    quantileExactInclusiveStateIf(0.5)(work, completion AND started_at IS NOT NULL) AS work_hours,
    countIf(completion AND blocked_ms IS NOT NULL) AS timed,
    sumIf(assumeNotNull(blocked_ms), completion AND blocked_ms IS NOT NULL) AS blocked_ms_sum,
    sumIf(toFloat64(cycle_ms), completion AND blocked_ms IS NOT NULL) AS timed_cycle_ms_sum,
    sum(live) AS live_change
FROM
(
    SELECT
        *,
        side,
        multiIf(side = 1, status, side = -1, previous_status, side = 2, created_status, blocked_status[side - 2]) AS label_status,
        multiIf(side = 1, project, side = -1, previous_project, side = 2, created_project, blocked_project[side - 2]) AS label_project,
        if(side = 1, due_on, previous_due_on) AS label_due,
        toInt64(multiIf(side = 1, kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress'), side = -1 AND previous_status IN ('open', 'in_progress'), -1, 0)) AS change,
        toInt64(multiIf(side = 1, kind IN ('task_created', 'task_updated'), side = -1, -1, 0)) AS live,
        toInt64(if(side >= 3, blocked_change[side - 2], 0)) AS blocked,
        (toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000 AS cycle,
        side = 1 AND kind = 'task_completed' AS completion,
        (toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(assumeNotNull(started_at))) / 3600000 AS work,
        toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at) AS cycle_ms
    FROM facts
    ARRAY JOIN arrayConcat(
        arrayFilter(s -> s = 1 OR (s = -1 AND kind IN ('task_updated', 'task_deleted')) OR (s = 2 AND kind = 'task_completed' AND first_completion = 1), CAST([1, -1, 2] AS Array(Int64))),
        arrayMap(i -> toInt64(i + 2), arrayEnumerate(blocked_change))) AS side
)
GROUP BY business, slot, label_project, label_status
