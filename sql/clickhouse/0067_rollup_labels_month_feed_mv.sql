-- The rollup's one view, so an insert into facts runs one view per rollup, not one per kind
-- of column. Each fact adds a row under its new labels (its flows, +1 open if it leaves the
-- task open, +1 live unless it deletes the task) and, when it changes or deletes a task, one
-- under the labels before it (-1 live; -1 open if the task was open).
CREATE MATERIALIZED VIEW IF NOT EXISTS rollup_labels_month_feed_mv TO rollup_labels_month AS
SELECT
    business,
    toDateTime(toStartOfMonth(occurred_at, 'UTC'), 'UTC') AS slot,
    label_project AS project,
    label_assignee AS assignee,
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
    sum(live) AS live_change
FROM
(
    SELECT
        *,
        side,
        if(side = 1, status, previous_status) AS label_status,
        if(side = 1, project, previous_project) AS label_project,
        if(side = 1, assignee, previous_assignee) AS label_assignee,
        if(side = 1, due_on, previous_due_on) AS label_due,
        toInt64(multiIf(side = 1, kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress'), previous_status IN ('open', 'in_progress'), -1, 0)) AS change,
        toInt64(if(side = 1, kind IN ('task_created', 'task_updated'), -1)) AS live,
        (toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000 AS cycle
    FROM facts
    ARRAY JOIN arrayFilter(s -> s = 1 OR kind IN ('task_updated', 'task_deleted'), [1, -1]) AS side
)
GROUP BY business, slot, label_project, label_assignee, label_status
