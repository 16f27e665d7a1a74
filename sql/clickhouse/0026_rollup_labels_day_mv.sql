-- rollup_labels_day regroups the blocks of rollup_feed (0023) instead of passing over
-- facts itself: the same rows as before. MODIFY QUERY swaps the view's source in one step,
-- so no insert meanwhile is counted twice or missed.
ALTER TABLE rollup_labels_day_mv MODIFY QUERY
SELECT
    business, day AS slot, project, assignee, status, facts, created, completed, cancelled,
    dependencies_added, dependencies_removed, cycle_hours_sum, cycle_hours, assignees, open_change, due_change
FROM rollup_feed
WHERE part = 0
