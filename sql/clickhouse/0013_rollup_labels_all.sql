-- One slot for all time (every row's slot is 1970-01-01) with the same labels as
-- rollup_labels_day: once merged, one row per label set holds every change of state since the
-- first fact, so open and overdue counts at "now" read a row per label set, and no other query.
CREATE TABLE IF NOT EXISTS rollup_labels_all
(
    business             LowCardinality(String),
    slot                 DateTime('UTC'),
    project              String,
    assignee             String,
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
    due_change           SimpleAggregateFunction(sumMap, Tuple(Array(Date32), Array(Int64)))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(slot)
ORDER BY (business, slot, project, assignee, status)
SETTINGS non_replicated_deduplication_window = 10000
