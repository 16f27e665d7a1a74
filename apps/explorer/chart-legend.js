import { el } from './dom.js';
import { formatBucket, formatValue } from './format.js';
import { labelOf } from './words.js';

const STYLES = {
  before: 'dashed: the comparison period',
  incomplete: 'dotted: periods not over yet',
};

/**
 * A chart's legend as a compact table under it, one row per line (its comparison and its
 * unfinished part share the row; the key above says once how those are drawn), scrolling
 * inside its box past a few rows. Each row's button shows or hides its lines; the value column
 * reads the bucket under the pointer, else the whole period (total for counts, else latest).
 */
export function renderLegend(target, plot, spec, colours, result) {
  const entries = new Map();
  spec.series.forEach((s, i) => {
    if (!entries.has(s.entry)) {
      entries.set(s.entry, { name: s.entry, series: [], full: s.full, column: s.column });
    }
    entries.get(s.entry).series.push(i + 1);
  });
  const column = spec.series[0]?.column;
  const additive = column?.type === 'integer' && column.unit !== 'people';
  const idle = additive ? 'Total' : 'Latest';
  const summary = (values) => {
    const known = values.filter((v) => v !== null && v !== undefined);
    if (known.length === 0) return null;
    return additive ? known.reduce((a, b) => a + b, 0) : known.at(-1);
  };
  const heading = el('th', { scope: 'col', class: 'num' }, idle);
  const rows = [...entries.values()].map((entry) => {
    const value = el('td', { class: 'num' }, formatValue(summary(entry.full), entry.column));
    const swatch = el('span', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.background = colours.get(entry.name);
    const toggle = el(
      'button',
      {
        type: 'button',
        'aria-pressed': 'true',
        onclick: () => {
          const shown = toggle.getAttribute('aria-pressed') !== 'true';
          toggle.setAttribute('aria-pressed', String(shown));
          for (const i of entry.series) plot.setSeries(i, { show: shown });
        },
      },
      swatch,
      entry.name,
    );
    return {
      entry,
      value,
      row: el('tr', { 'data-entry': entry.name }, el('th', { scope: 'row' }, toggle), value),
    };
  });
  const styles = [...new Set(spec.series.map((s) => s.style).filter(Boolean))];
  const region = el(
    'div',
    {
      class: 'legend',
      role: 'region',
      tabindex: '0',
      'aria-label': `Legend: ${[...new Set(spec.series.map((s) => labelOf(s.column)))].join(', ')}`,
    },
    styles.length > 0
      ? el(
          'p',
          { class: 'legend-key' },
          `Solid: this period; ${styles.map((s) => STYLES[s]).join('; ')}.`,
        )
      : null,
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Series'), heading)),
      el(
        'tbody',
        {},
        rows.map((r) => r.row),
      ),
    ),
  );
  target.append(region);
  plot.onCursor = (u) => {
    const i = u.cursor.idx;
    if (i === null || i === undefined) {
      heading.textContent = idle;
      for (const r of rows)
        r.value.textContent = formatValue(summary(r.entry.full), r.entry.column);
      return;
    }
    heading.textContent = spec.time
      ? formatBucket(spec.bucketLabels.get(spec.x[i]), result.timeDimension.name, result.timezone)
      : (spec.labels[i] ?? '');
    for (const r of rows)
      r.value.textContent = formatValue(r.entry.full?.[i] ?? null, r.entry.column);
  };
  return region;
}
