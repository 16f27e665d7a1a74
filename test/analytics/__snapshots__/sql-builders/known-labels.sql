-- libs/analytics/compile/known-labels.ts, now 2026-11-25T10:30:00.000Z

-- labels named by eq and in, a group among them
SELECT DISTINCT 'project' AS dimension, project AS label FROM facts WHERE business IN {businesses:Array(String)} AND project IN {k0:Array(String)}
UNION ALL
SELECT DISTINCT 'assignee' AS dimension, assignee AS label FROM facts WHERE business IN {businesses:Array(String)} AND assignee IN {k1:Array(String)};
-- params:
--   businesses = ["acme"]
--   k0 = ["Apollo"]
--   k1 = ["ana"]
