/**
 * Names as a person reads them: the catalog's own `label` where it gives one, otherwise made
 * from the identifier (`p90_cycle_time_hours` → "P90 cycle time", `last_90_days` → "Last 90
 * days"), so the page never shows an identifier where a word would do.
 */
/** A metric's unit, said by its values and its axis rather than in its name. */
const UNIT_SUFFIX = /_hours$/;
const WORDS = { avg: 'Average', pct: 'percent' };

export function humanise(name) {
  const words = String(name)
    .replace(UNIT_SUFFIX, '')
    .split('_')
    .map((word) => WORDS[word] ?? (/^p\d+$/.test(word) ? word.toUpperCase() : word));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A catalog entry's (or an answer column's) name for people. */
export const labelOf = (item) => item?.label ?? humanise(item?.name ?? '');

/** What an axis of this unit measures, in words. */
export function unitWords(unit) {
  switch (unit) {
    case 'ratio':
      return 'share (%)';
    case 'hours':
      return 'duration';
    case undefined:
    case null:
      return '';
    default:
      return unit;
  }
}

/** Each catalog item by name, for columns of an answer that carry names only. */
export function indexCatalog(catalog) {
  const byName = new Map();
  for (const item of [...catalog.metrics, ...catalog.dimensions, ...catalog.periods]) {
    byName.set(item.name, item);
  }
  return byName;
}
