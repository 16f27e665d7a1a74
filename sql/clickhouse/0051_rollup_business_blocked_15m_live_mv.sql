-- Each task fact adds a task under its new labels (+1) and, when it changes or deletes a task,
-- takes one away under the labels before it (-1), whatever the status: the running sum is the
-- tasks not deleted in each status. A view of its own leaves the rollup's first view as it was.
CREATE MATERIALIZED VIEW IF NOT EXISTS rollup_business_blocked_15m_live_mv TO rollup_business_blocked_15m AS
SELECT
    business,
    toStartOfFifteenMinutes(occurred_at) AS slot,
    label_status AS status,
    sum(side) AS live_change
FROM
(
    SELECT
        *,
        side,
        if(side = 1, status, previous_status) AS label_status
    FROM facts
    ARRAY JOIN arrayFilter(s -> (s = 1 AND kind IN ('task_created', 'task_updated')) OR (s = -1 AND kind IN ('task_updated', 'task_deleted')), CAST([1, -1] AS Array(Int64))) AS side
    WHERE kind IN ('task_created', 'task_updated', 'task_deleted')
)
GROUP BY business, slot, label_status
