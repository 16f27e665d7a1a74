-- A completion's work time runs from its task's first move to in_progress, and its blocked time
-- is how long the task counted in blocked_tasks until then; the write side records both on the
-- completion fact (started_at null: never in progress, no work time; blocked_ms null: a task
-- from before blocked time was recorded). Other facts leave them null.
ALTER TABLE facts
    ADD COLUMN IF NOT EXISTS started_at Nullable(DateTime64(3, 'UTC')),
    ADD COLUMN IF NOT EXISTS blocked_ms Nullable(Float64)
