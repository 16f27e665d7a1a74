-- libs/analytics/compile/fact-bounds.ts, now 2026-11-25T10:30:00.000Z

-- first fact of some businesses
SELECT toUnixTimestamp64Milli(min(occurred_at)) AS first, count() AS facts FROM facts WHERE business IN {businesses:Array(String)};
-- params:
--   businesses = ["acme","beta"]

-- first fact of every business
SELECT toUnixTimestamp64Milli(min(occurred_at)) AS first, count() AS facts FROM facts ;
-- params: none

-- next fact at or after now
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, 0)) AS next_compared
FROM facts
WHERE business IN {businesses:Array(String)} AND (occurred_at >= {now:DateTime64(3, 'UTC')} OR (0));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   businesses = ["acme"]

-- next fact, and next compared fact after a cut
SELECT
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {now:DateTime64(3, 'UTC')})) AS next_fact,
  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= {cut:DateTime64(3, 'UTC')} AND occurred_at < {window_end:DateTime64(3, 'UTC')})) AS next_compared
FROM facts
WHERE (occurred_at >= {now:DateTime64(3, 'UTC')} OR (occurred_at >= {cut:DateTime64(3, 'UTC')} AND occurred_at < {window_end:DateTime64(3, 'UTC')}));
-- params:
--   now = "2026-11-25 10:30:00.000"
--   cut = "2025-11-25 10:30:00.000"
--   window_end = "2025-11-25 11:30:00.000"
