-- Date holds 1970-01-01..2149-06-06 and silently clamps anything outside, so a task due in 1969
-- or 2200 would count as due on another day. Date32 holds 1900-01-01..2299-12-31, the range the
-- API accepts. Facts projected before this change keep their clamped dates until a
-- `projector rebuild`; on a table that already has Date32 this is a no-op.
ALTER TABLE facts MODIFY COLUMN due_on Nullable(Date32)
