-- The one pass over facts behind rollup_feed (see 0023): the sides and sums each rollup's view
-- computed over facts on its own before (0005, 0009, 0012, 0014, 0022), grouped by every label
-- any of them keeps. A retried insert (same deduplication token) is dropped from every rollup
-- downstream as from facts.
CREATE MATERIALIZED VIEW IF NOT EXISTS rollup_feed_mv TO rollup_feed AS
SELECT
    business,
    toStartOfDay(if(side = 2, task_created_at, occurred_at), 'UTC') AS day,
    label_project AS project,
    label_assignee AS assignee,
    label_status AS status,
    toUInt8(side >= 2) AS part,
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
    sum(blocked) AS blocked_change
FROM
(
    SELECT
        *,
        side,
        multiIf(side = 1, status, side = -1, previous_status, side = 2, created_status, blocked_status[side - 2]) AS label_status,
        multiIf(side = 1, project, side = -1, previous_project, side = 2, created_project, blocked_project[side - 2]) AS label_project,
        multiIf(side = 1, assignee, side = -1, previous_assignee, side = 2, created_assignee, blocked_assignee[side - 2]) AS label_assignee,
        if(side = 1, due_on, previous_due_on) AS label_due,
        toInt64(multiIf(side = 1, kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress'), side = -1, -1, 0)) AS change,
        toInt64(if(side >= 3, blocked_change[side - 2], 0)) AS blocked,
        (toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000 AS cycle
    FROM facts
    ARRAY JOIN arrayConcat(
        arrayFilter(s -> s = 1 OR (s = -1 AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')) OR (s = 2 AND kind = 'task_completed' AND first_completion = 1), CAST([1, -1, 2] AS Array(Int64))),
        arrayMap(i -> toInt64(i + 2), arrayEnumerate(blocked_change))) AS side
)
GROUP BY business, day, label_project, label_assignee, label_status, part
