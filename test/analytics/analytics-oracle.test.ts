// Oracle: seeded random task histories go through the write side and the projector; every
// metric × dimension × period from ClickHouse must equal an independent TypeScript computation.
// Whole-hour zones here (every rollup answers somewhere); the other zones in
// analytics-oracle-offset-zones.test.ts.
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { describeAnalyticsOracle } from '../support/analytics-oracle-suite.ts';

describeAnalyticsOracle(
  [
    { seed: 1, tz: 'UTC' },
    { seed: 7, tz: 'Europe/Paris' },
  ],
  ROLLUP_NAMES,
);
