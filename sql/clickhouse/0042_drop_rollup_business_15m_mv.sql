-- rollup_business_blocked_15m (0040) replaces rollup_business_15m: the same rows plus completions
-- and blocked changes. An installation that has the older one stops feeding it first, then drops it.
DROP VIEW IF EXISTS rollup_business_15m_mv
