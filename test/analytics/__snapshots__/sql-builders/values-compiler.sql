-- libs/analytics/compile/values-compiler.ts, now 2026-11-25T10:30:00.000Z

-- projects on facts, this month, by a prefix
SELECT project AS value, count() AS n
FROM facts
WHERE business = {business:String} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')} AND project != {none:String} AND startsWith(lowerUTF8(project), lowerUTF8({prefix:String}))
GROUP BY value
ORDER BY n DESC, value ASC
LIMIT {limit:UInt32};
-- params:
--   business = "acme"
--   from = "2026-10-31 23:00:00.000"
--   to = "2026-11-30 23:00:00.000"
--   none = ""
--   prefix = "ap"
--   limit = 50

-- statuses on a rollup, all time
SELECT status AS value, sum(facts) AS n
FROM rollup_labels_all
WHERE business = {business:String}
GROUP BY value
HAVING n > 0
ORDER BY n DESC, value ASC
LIMIT {limit:UInt32};
-- params:
--   business = "acme"
--   limit = 50
