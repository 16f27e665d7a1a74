import { describe, expect, it } from 'vitest';
import { readWallClock, wallClock } from '../../libs/analytics/period/period.ts';

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'America/St_Johns',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Adelaide',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/Santiago',
  // Offsets in seconds before standard time: Amsterdam kept +00:19:32 until 1937.
  'Europe/Amsterdam',
  'Africa/Monrovia',
];

/** Every change of offset between `from` and `to`, found to the second. */
function transitions(zone: string, from: number, to: number): number[] {
  const offset = (t: number) => readWallClock(t, zone) - t;
  const found: number[] = [];
  const step = 86_400_000;
  for (let t = from; t < to; t += step) {
    if (offset(t) === offset(t + step)) continue;
    let [lo, hi] = [t, t + step];
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (offset(mid) === offset(lo)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}

describe('wall clock (offsets remembered per quarter hour)', () => {
  it('equals Intl to the second around every change of offset, and in between', () => {
    let compared = 0;
    for (const zone of ZONES) {
      const historic = zone === 'Europe/Amsterdam' || zone === 'Africa/Monrovia';
      const from = Date.UTC(historic ? 1916 : 2024, 0, 1);
      const to = Date.UTC(historic ? 1942 : 2027, 0, 1);
      const changes = transitions(zone, from, to);
      for (const change of changes) {
        for (const delta of [-900_000, -1000, -1, 0, 1, 999, 1000, 450_000, 899_999]) {
          const instant = change + delta;
          expect(wallClock(instant, zone), `${zone} ${new Date(instant).toISOString()}`).toBe(
            readWallClock(instant, zone),
          );
          compared++;
        }
      }
      for (let t = from; t < to; t += 31 * 3_600_000 + 123_457) {
        expect(wallClock(t, zone), `${zone} ${new Date(t).toISOString()}`).toBe(
          readWallClock(t, zone),
        );
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(5_000);
  });
});
