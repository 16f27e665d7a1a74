-- rollup_business_day_feed_mv (0059) writes what this view wrote; the rollup is filled again
-- from facts after the upgrade (ROLLUP_HOLDS), so rows it wrote twice meanwhile are not read.
DROP VIEW IF EXISTS rollup_business_day_times_mv
