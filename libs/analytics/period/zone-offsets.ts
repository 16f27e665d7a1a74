import { wallClock } from './period.ts';

/**
 * Whether a time zone's UTC offset stays a whole multiple of a slot length over a range: then
 * every local midnight (and local hour, if the slot is at most an hour) falls on a slot
 * boundary, and a rollup of that slot length can be bucketed in that zone exactly.
 *
 * Offsets are sampled twice a day: a zone's offset changes a few times a year at most, and each
 * offset holds for months. Samples are kept per zone and UTC year, so a zone costs its ~730
 * samples per year once per process (bounded, oldest dropped first).
 */
export function offsetsAligned(timezone: string, from: Date, to: Date, slotMs: number): boolean {
  const first = Math.max(1970, from.getUTCFullYear());
  const last = to.getUTCFullYear();
  for (let year = first; year <= last; year++) {
    for (const offset of yearOffsets(timezone, year)) {
      if (offset % slotMs !== 0) return false;
    }
  }
  return true;
}

const HALF_DAY = 43_200_000;
const MAX_ENTRIES = 2_000;
const offsetsByYear = new Map<string, Set<number>>();

function yearOffsets(timezone: string, year: number): Set<number> {
  const key = `${timezone} ${year}`;
  let offsets = offsetsByYear.get(key);
  if (!offsets) {
    offsets = new Set();
    for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += HALF_DAY) {
      offsets.add(wallClock(t, timezone) - t);
    }
    if (offsetsByYear.size >= MAX_ENTRIES) {
      offsetsByYear.delete(offsetsByYear.keys().next().value as string);
    }
    offsetsByYear.set(key, offsets);
  }
  return offsets;
}
