-- Each completion adds its work and blocked times (those it has) under its labels, beside
-- the row the rollup's own view adds for the same fact (same slot and labels), so it makes no
-- group of its own. A second view on the same table leaves the first as it was.
CREATE MATERIALIZED VIEW IF NOT EXISTS rollup_labels_day_times_mv TO rollup_labels_day AS
SELECT
    business,
    toStartOfDay(occurred_at, 'UTC') AS slot,
    project,
    assignee,
    status,
    countIf(started_at IS NOT NULL) AS started,
    sumIf(work, started_at IS NOT NULL) AS work_hours_sum,
    quantileExactInclusiveStateIf(0.5)(work, started_at IS NOT NULL) AS work_hours,
    countIf(blocked_ms IS NOT NULL) AS timed,
    sumIf(assumeNotNull(blocked_ms), blocked_ms IS NOT NULL) AS blocked_ms_sum,
    sumIf(toFloat64(cycle_ms), blocked_ms IS NOT NULL) AS timed_cycle_ms_sum
FROM
(
    SELECT
        *,
        (toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(assumeNotNull(started_at))) / 3600000 AS work,
        toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at) AS cycle_ms
    FROM facts
    WHERE kind = 'task_completed' AND (started_at IS NOT NULL OR blocked_ms IS NOT NULL)
)
GROUP BY business, slot, project, assignee, status
