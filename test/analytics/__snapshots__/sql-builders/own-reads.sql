-- libs/analytics/compile/own-reads.ts, now 2026-11-25T10:30:00.000Z

-- a statement on facts: the period twice over (completions), state up to now
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(kind) + length(task_gid) + length(assignee) + length(status) + length(previous_status) + length(previous_assignee)) + count() * 8) AS bytes FROM facts WHERE occurred_at >= {s0_from:DateTime64(3, 'UTC')} AND occurred_at < {s0_to:DateTime64(3, 'UTC')} UNION ALL SELECT count() AS rows, toUInt64(sum(length(kind) + length(task_gid) + length(assignee) + length(status) + length(previous_status) + length(previous_assignee)) + count() * 8) AS bytes FROM facts WHERE occurred_at < {s1_to:DateTime64(3, 'UTC')});
-- params:
--   s0_from = "2026-11-01 00:00:00.000"
--   s0_to = "2026-12-01 00:00:00.000"
--   s1_to = "2026-12-01 00:00:00.000"

-- a statement on a 15-minute rollup with a daily base
SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 44) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {s0_from:DateTime64(3, 'UTC')} AND slot < {s0_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 44) AS bytes FROM (SELECT DISTINCT business, slot, project, status FROM rollup_projects_blocked_day WHERE business IN {businesses:Array(String)} AND slot < {s1_to:DateTime64(3, 'UTC')}) UNION ALL SELECT count() AS rows, toUInt64(sum(length(business) + length(status)) + count() * 44) AS bytes FROM (SELECT DISTINCT business, slot, status FROM rollup_business_blocked_15m WHERE business IN {businesses:Array(String)} AND slot >= {s2_from:DateTime64(3, 'UTC')} AND slot < {s2_to:DateTime64(3, 'UTC')}));
-- params:
--   businesses = ["acme"]
--   s0_from = "2026-11-19 00:00:00.000"
--   s0_to = "2026-11-26 00:00:00.000"
--   s1_to = "2026-11-20 00:00:00.000"
--   s2_from = "2026-11-20 00:00:00.000"
--   s2_to = "2026-11-26 00:00:00.000"
