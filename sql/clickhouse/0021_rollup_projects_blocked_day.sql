-- Daily (UTC) flows and open-state changes per business, project and status: by project, what
-- only the much larger rollup_labels_day could answer. completed_by: for the tasks created in
-- the slot under these labels, how many were first completed in each slot, so completion_rate
-- needs no scan of facts. blocked_change: the signed changes of blocked_tasks, summed like
-- open_change, so blocked_tasks needs no replay of task histories.
CREATE TABLE IF NOT EXISTS rollup_projects_blocked_day
(
    business             LowCardinality(String),
    slot                 DateTime('UTC'),
    project              String,
    status               LowCardinality(String),
    facts                SimpleAggregateFunction(sum, UInt64),
    created              SimpleAggregateFunction(sum, UInt64),
    completed            SimpleAggregateFunction(sum, UInt64),
    cancelled            SimpleAggregateFunction(sum, UInt64),
    dependencies_added   SimpleAggregateFunction(sum, UInt64),
    dependencies_removed SimpleAggregateFunction(sum, UInt64),
    cycle_hours_sum      SimpleAggregateFunction(sum, Float64),
    cycle_hours          AggregateFunction(quantileExactInclusive(0.5), Float64),
    assignees            AggregateFunction(uniqExact, String),
    open_change          SimpleAggregateFunction(sum, Int64),
    due_change           SimpleAggregateFunction(sumMap, Tuple(Array(Date32), Array(Int64))),
    completed_by         SimpleAggregateFunction(sumMap, Tuple(Array(DateTime('UTC')), Array(UInt64))),
    blocked_change       SimpleAggregateFunction(sum, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(slot)
ORDER BY (business, slot, project, status)
SETTINGS non_replicated_deduplication_window = 10000
