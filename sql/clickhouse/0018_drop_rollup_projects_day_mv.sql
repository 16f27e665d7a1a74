-- rollup_projects_blocked_day (0021) replaces rollup_projects_day: the same rows plus the
-- blocked changes. An installation that has the older one stops feeding it first, then drops it.
DROP VIEW IF EXISTS rollup_projects_day_mv
