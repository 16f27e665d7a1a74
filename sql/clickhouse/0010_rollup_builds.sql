-- Whether each rollup holds every fact (latest row per rollup wins): complete when it starts
-- empty beside empty facts or a backfill from facts finishes; not complete while one runs.
-- Queries read facts, never a rollup that is not complete.
CREATE TABLE IF NOT EXISTS rollup_builds
(
    name         String,
    complete     UInt8,
    completed_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(completed_at)
ORDER BY name
