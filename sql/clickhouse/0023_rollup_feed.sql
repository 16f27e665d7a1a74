-- What the rollups fed from facts share, worked out in one pass over each inserted block: each
-- fact's sides (its new labels; the labels it leaves when it ends an open state; a first
-- completion's creation; each blocked change) aggregated per business, UTC day and every label.
-- part 0 holds the flows and open-state changes (sides 1 and -1), part 1 the creation credits and
-- blocked changes (sides 2 and up), which only rollup_projects_blocked_day keeps. Engine Null:
-- nothing is stored; the rollups' views (0025–0029) regroup each block it receives, so a
-- rollup costs an insert a small regrouping instead of a pass of its own over the facts.
CREATE TABLE IF NOT EXISTS rollup_feed
(
    business             LowCardinality(String),
    day                  DateTime('UTC'),
    project              String,
    assignee             String,
    status               LowCardinality(String),
    part                 UInt8,
    facts                UInt64,
    created              UInt64,
    completed            UInt64,
    cancelled            UInt64,
    dependencies_added   UInt64,
    dependencies_removed UInt64,
    cycle_hours_sum      Float64,
    cycle_hours          AggregateFunction(quantileExactInclusive(0.5), Float64),
    assignees            AggregateFunction(uniqExact, String),
    open_change          Int64,
    due_change           Tuple(Array(Date32), Array(Int64)),
    completed_by         Tuple(Array(DateTime('UTC')), Array(UInt64)),
    blocked_change       Int64
)
ENGINE = Null
