-- libs/analytics/compile/engine-zones.ts, now 2026-11-25T10:30:00.000Z

-- zones the engine loads
SELECT time_zone FROM system.time_zones;
-- params: none
