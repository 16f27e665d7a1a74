-- Per quarter hour (UTC) and status: every zone whose offsets are whole quarter hours (all zones
-- in use today, 30- and 45-minute ones included), any period, any time bucket, state metrics
-- included. completed_by and blocked_change as in rollup_projects_blocked_day, at this slot, so
-- completion_rate and blocked_tasks answer from here in any such zone.
CREATE TABLE IF NOT EXISTS rollup_business_blocked_15m
(
    business             LowCardinality(String),
    slot                 DateTime('UTC'),
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
ORDER BY (business, slot, status)
SETTINGS non_replicated_deduplication_window = 10000
