-- Each fact adds a row under its new labels (its flows, +1 open if it leaves the task open) and,
-- when it ends an open state, a row under the labels before it (-1 open). Settings make a
-- retried insert with the same deduplication token a no-op here as on facts.
CREATE MATERIALIZED VIEW IF NOT EXISTS rollup_labels_all_mv TO rollup_labels_all AS
SELECT
    business,
    toDateTime(0, 'UTC') AS slot,
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
    sumMap(if(change != 0 AND label_due IS NOT NULL, [assumeNotNull(label_due)], []), if(change != 0 AND label_due IS NOT NULL, [change], [])) AS due_change
FROM
(
    SELECT
        *,
        side,
        if(side = 1, status, previous_status) AS label_status,
        if(side = 1, project, previous_project) AS label_project,
        if(side = 1, assignee, previous_assignee) AS label_assignee,
        if(side = 1, due_on, previous_due_on) AS label_due,
        toInt64(if(side = 1, kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress'), -1)) AS change,
        (toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000 AS cycle
    FROM facts
    ARRAY JOIN arrayFilter(s -> s = 1 OR (kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')), [1, -1]) AS side
)
GROUP BY business, slot, label_project, label_assignee, label_status
