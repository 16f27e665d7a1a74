-- A task's first completion carries the labels the task was created with (and says it is the
-- first): completion_rate counts a creation when its task is completed within the same bucket,
-- and a rollup can only credit that completion to the creation's slot and labels if the fact
-- names them. Other facts leave these at their defaults. Completion facts projected before
-- these columns existed read an empty created_status; the rollup backfill works their values
-- out from the facts themselves (libs/projection/rollup-backfill.ts).
ALTER TABLE facts
    ADD COLUMN IF NOT EXISTS created_project String DEFAULT '' AFTER dependency_gid,
    ADD COLUMN IF NOT EXISTS created_assignee String DEFAULT '' AFTER created_project,
    ADD COLUMN IF NOT EXISTS created_status LowCardinality(String) DEFAULT '' AFTER created_assignee,
    ADD COLUMN IF NOT EXISTS first_completion UInt8 DEFAULT 0 AFTER created_status
