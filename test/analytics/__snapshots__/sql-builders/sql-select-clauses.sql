-- libs/analytics/compile/sql/select-clauses.ts

-- every clause
SELECT DISTINCT j, sum(sign) AS weight
FROM facts
ARRAY JOIN range(1, 3) AS k
WHERE business IN {businesses:Array(String)} AND kind = 1
GROUP BY j
HAVING weight != 0
SETTINGS join_algorithm = 'partial_merge'
-- placeholders:
--   businesses: Array(String)

-- a common table of two selects joined
t AS (SELECT j FROM facts), u AS (SELECT j FROM a UNION ALL SELECT j FROM b WHERE j > 0)
-- placeholders: none
