-- Times of the completions in each slot: work times (first move to in_progress → completion)
-- of those whose task had been in progress, how many, their sum and an exact quantile state, so
-- work-time averages and percentiles merge exactly as cycle times do; and the blocked and cycle
-- milliseconds of the completions whose blocked time is known (avg_blocked_hours,
-- flow_efficiency), whole numbers whose sums are exact in any order. Rows from before hold none,
-- as their facts do.
ALTER TABLE rollup_business_blocked_15m
    ADD COLUMN IF NOT EXISTS started SimpleAggregateFunction(sum, UInt64),
    ADD COLUMN IF NOT EXISTS work_hours_sum SimpleAggregateFunction(sum, Float64),
    ADD COLUMN IF NOT EXISTS work_hours AggregateFunction(quantileExactInclusive(0.5), Float64),
    ADD COLUMN IF NOT EXISTS timed SimpleAggregateFunction(sum, UInt64),
    ADD COLUMN IF NOT EXISTS blocked_ms_sum SimpleAggregateFunction(sum, Float64),
    ADD COLUMN IF NOT EXISTS timed_cycle_ms_sum SimpleAggregateFunction(sum, Float64)
