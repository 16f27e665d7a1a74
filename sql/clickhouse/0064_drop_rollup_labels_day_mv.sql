-- rollup_labels_day_feed_mv (0063) writes what this view wrote; the rollup is filled again
-- from facts after the upgrade (ROLLUP_HOLDS), so rows it wrote twice meanwhile are not read.
DROP VIEW IF EXISTS rollup_labels_day_mv
