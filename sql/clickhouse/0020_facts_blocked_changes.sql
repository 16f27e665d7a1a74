-- What each write did to blocked_tasks: one entry per task counted in (+1) or out of (-1) under
-- the labels listed, on one fact of the write. Whether a task is blocked depends on other tasks'
-- states, so only the write side, which sees them, can say; the rollups then sum the changes.
-- blocked_known is 0 on facts written before the write side recorded this (and on facts that
-- `demo` generates): the rollup backfill works their blocked_tasks out from the facts.
ALTER TABLE facts
    ADD COLUMN IF NOT EXISTS blocked_known UInt8 DEFAULT 0 AFTER first_completion,
    ADD COLUMN IF NOT EXISTS blocked_project Array(String) AFTER blocked_known,
    ADD COLUMN IF NOT EXISTS blocked_assignee Array(String) AFTER blocked_project,
    ADD COLUMN IF NOT EXISTS blocked_status Array(LowCardinality(String)) AFTER blocked_assignee,
    ADD COLUMN IF NOT EXISTS blocked_change Array(Int8) AFTER blocked_status
