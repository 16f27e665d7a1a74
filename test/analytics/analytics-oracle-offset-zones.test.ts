// The analytics oracle (see analytics-oracle.test.ts) in zones whose periods straddle a change
// of summer time (New York) or whose local midnights fall on quarter hours (Kathmandu, +05:45).
import { describeAnalyticsOracle } from '../support/analytics-oracle-suite.ts';

describeAnalyticsOracle(
  [
    { seed: 42, tz: 'America/New_York' },
    { seed: 5, tz: 'Asia/Kathmandu' },
  ],
  // Quarter-hour local midnights: the 15-minute rollup and the label rollups answer here.
  ['rollup_business_blocked_15m', 'rollup_labels_all', 'rollup_labels_month'],
);
