-- The task's labels before a change of state, beside the status it had (previous_status):
-- open and overdue counts add each new state and take away the old one, a single pass over
-- facts instead of a replay of every task's history. Rows projected before these columns
-- existed read them from their defaults, which assume only the status changed.
ALTER TABLE facts
    ADD COLUMN IF NOT EXISTS previous_project String DEFAULT project AFTER previous_status,
    ADD COLUMN IF NOT EXISTS previous_assignee String DEFAULT assignee AFTER previous_project,
    ADD COLUMN IF NOT EXISTS previous_due_on Nullable(Date32) DEFAULT due_on AFTER previous_assignee
