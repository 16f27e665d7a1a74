-- Signed changes of the tasks not deleted, whatever their status (tasks_in_status), summed like
-- open_change. Rows from before hold none: rollup_builds marks the rollup to be filled again.
ALTER TABLE rollup_business_day
    ADD COLUMN IF NOT EXISTS live_change SimpleAggregateFunction(sum, Int64)
