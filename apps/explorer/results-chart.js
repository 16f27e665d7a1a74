import { renderLegend } from './chart-legend.js';
import {
  bucketKey,
  formatBucket,
  formatLabel,
  formatTick,
  formatValue,
  hasOffset,
} from './format.js';
import { labelOf, unitWords } from './words.js';

/** Labels drawn one by one; the rest share an "other" series, so the legend stays short. */
export const TOP_LABELS = 5;
const HEIGHT = 300;
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];
/** Hour axes step by whole hours, then whole days. */
const HOUR_STEPS = [1, 2, 3, 6, 12, 24, 48, 72, 96, 120, 168, 240, 336, 480, 720, 1440, 2160, 4320];
const PALETTE_SIZE = 10;
/** Room each date on a time axis needs, in CSS pixels. */
const TICK_ROOM = 96;

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const palette = () =>
  Array.from({ length: PALETTE_SIZE }, (_, i) => css(`--series-${i + 1}`)).filter(Boolean);

/** A count: a label without a row in a bucket counted nothing there, so it is 0, not a gap. */
const isCount = (column) => column.type === 'integer';
/** Counts of tasks or edges add up across labels; distinct people or ratios do not. */
const isAdditive = (column) => isCount(column) && column.unit !== 'people';

/** The palette slot a label asks for: the same label gets the same colour on every chart. */
export function colourSlot(label, size = PALETTE_SIZE) {
  let hash = 2166136261;
  for (const char of String(label)) {
    hash ^= char.codePointAt(0);
    hash = Math.imul(hash, 16777619);
  }
  return (hash >>> 0) % size;
}

/**
 * Each legend entry's colour: the slot of its label (the breakdown's label, else the metric),
 * or, when an entry before it already holds that slot, the next free one. Entries go by metric,
 * then label in alphabetical order: two lines of one chart never share a colour, and a label
 * has its colour on every chart whatever its ranking (its first metric's line, where a chart
 * holds several metrics).
 */
function assignColours(series, colours) {
  const entries = new Map();
  for (const s of series) {
    if (!entries.has(s.entry))
      entries.set(s.entry, { key: s.colourKey ?? s.entry, rank: s.rank ?? 0 });
  }
  const ordered = [...entries].sort(
    ([, a], [, b]) => a.rank - b.rank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  const taken = new Set();
  const assigned = new Map();
  for (const [entry, { key }] of ordered) {
    if (key.startsWith('other (')) {
      assigned.set(entry, css('--muted'));
      continue;
    }
    let slot = colourSlot(key, colours.length);
    for (let i = 0; i < colours.length && taken.has(slot); i++) slot = (slot + 1) % colours.length;
    taken.add(slot);
    assigned.set(entry, colours[slot]);
  }
  return assigned;
}

/**
 * Draws the metrics named (all of the answer's when `choice` is empty) with uPlot: lines over
 * time when the answer has a time dimension, one chart per unit so that metrics sharing a unit
 * share axes (the comparison dashed, incomplete buckets dotted and faint); bars otherwise, one
 * chart per metric. Each chart has its legend as a table below it, one row per line.
 * Returns `{plots, setSize, destroy, notes}`, or null when nothing is drawn.
 * Colours come from the page's CSS, so light and dark schemes both read.
 */
export function drawChart(container, result, choice) {
  const uPlot = globalThis.uPlot;
  const columns = choice ? result.metrics.filter((m) => m.name === choice) : result.metrics;
  if (!uPlot || columns.length === 0 || result.rows.length === 0) return null;
  const panels = result.timeDimension ? byUnit(columns) : columns.map((c) => [c]);
  container.replaceChildren();
  const notes = new Set();
  const plots = panels.map((group) => {
    const spec = result.timeDimension ? timeSeries(result, group) : categories(result, group);
    for (const note of spec.notes ?? []) notes.add(note);
    const target = document.createElement('div');
    target.className = 'plot';
    target.dataset.metrics = group.map((c) => c.name).join(',');
    target.dataset.points = String(spec.x.length);
    container.append(target);
    const colours = assignColours(spec.series, palette());
    const plot = new uPlot(
      options(uPlot, container, result, group, spec, colours),
      [spec.x, ...spec.series.map((s) => s.values)],
      target,
    );
    // The drawing is one image named for what it shows; its legend, with buttons, stays apart.
    const image = target.querySelector('.u-wrap');
    image?.setAttribute('role', 'img');
    image?.setAttribute(
      'aria-label',
      `${group.map(labelOf).join(', ')} by ${spec.xLabel}: ${spec.x.length} points`,
    );
    renderLegend(target, plot, spec, colours, result);
    return plot;
  });
  // Tests and scripts read what was drawn here, exactly as uPlot holds it.
  container.plots = plots;
  return {
    plots,
    notes: [...notes],
    setSize: (size) => {
      for (const plot of plots) plot.setSize(size);
    },
    destroy: () => {
      for (const plot of plots) plot.destroy();
      container.plots = [];
    },
  };
}

function byUnit(columns) {
  const units = new Map();
  for (const column of columns) {
    const unit = column.unit ?? column.name;
    units.set(unit, [...(units.get(unit) ?? []), column]);
  }
  return [...units.values()];
}

/** Steps between ticks that land on round boundaries, in buckets of each dimension. */
const ROUND_STEPS = {
  hour: [1, 2, 3, 6, 12, 24],
  day: [1, 2, 7, 14, 28],
  month: [1, 2, 3, 6, 12],
};

/** Where a bucket sits for rounding: its hour, its day from a Monday, its month of the year. */
function bucketPosition(dimension, key, label) {
  const date = new Date(key * 1000);
  if (dimension === 'hour') return Number(/T(\d{2})/.exec(String(label))?.[1] ?? 0);
  if (dimension === 'day') return Math.floor(key / 86_400) + 3; // 1970-01-01 was a Thursday.
  if (dimension === 'month') return date.getUTCMonth();
  return null;
}

/**
 * The ticks of a time axis: bucket starts only, as many as their dates have room for, on round
 * boundaries where the dimension has them (Mondays for days a week apart or more, midnights and
 * whole hours for hours, quarters and years for months); weeks and quarters every k-th.
 */
function bucketSplits(spec, dimension, width) {
  const { x } = spec;
  const room = Math.max(2, Math.floor(width / (dimension === 'hour' ? 150 : TICK_ROOM)));
  const needed = Math.max(1, Math.ceil(x.length / room));
  const steps = ROUND_STEPS[dimension];
  if (steps) {
    const step = steps.find((s) => s >= needed);
    if (step !== undefined) {
      const round = x.filter(
        (key) => bucketPosition(dimension, key, spec.bucketLabels.get(key)) % step === 0,
      );
      if (round.length > 1) return round;
    }
  }
  return x.filter((_, i) => i % needed === 0);
}

/** Half a bucket either side, so the first and last points are not on the frame. */
const pad = (x) => (x.length > 1 ? (x[1] - x[0]) / 2 : 43_200);

function options(uPlot, container, result, group, spec, colours) {
  const column = group[0];
  const fg = css('--fg');
  const grid = css('--line');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const dimension = result.timeDimension?.name;
  const yUnit = group.length > 1 || !result.timeDimension ? unitWords(column.unit) : '';
  return {
    width: Math.max(280, container.clientWidth),
    height: HEIGHT,
    scales: {
      x: spec.time
        ? { time: false, range: [spec.x[0] - pad(spec.x), spec.x.at(-1) + pad(spec.x)] }
        : { time: false, range: [-0.5, spec.labels.length - 0.5] },
      y: { range: (_u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      spec.time
        ? {
            ...axis,
            label: spec.xLabel,
            splits: (u) => bucketSplits(spec, dimension, u.bbox.width / devicePixelRatio),
            values: (_u, splits) =>
              splits.map((v) => formatBucket(spec.bucketLabels.get(v), dimension, result.timezone)),
          }
        : {
            ...axis,
            label: spec.xLabel,
            splits: () => spec.labels.map((_, i) => i),
            values: (_u, splits) => splits.map((i) => spec.labels[i] ?? ''),
            rotate: spec.labels.length > 6 ? -30 : 0,
            size: spec.labels.length > 6 ? 80 : 50,
          },
      {
        ...axis,
        size: column.unit === 'hours' ? 70 : 60,
        label: yUnit || unitWords(column.unit) || labelOf(column),
        // Counts are ticked at whole numbers only, durations at whole hours and days.
        incrs: isCount(column) ? WHOLE_STEPS : column.unit === 'hours' ? HOUR_STEPS : undefined,
        values: (_u, splits) => splits.map((v) => formatTick(v, column)),
      },
    ],
    legend: { show: false },
    hooks: { setCursor: [(u) => u.onCursor?.(u)] },
    series: [
      { label: spec.xLabel },
      ...spec.series.map((s) => {
        const colour = colours.get(s.entry);
        return {
          label: s.label,
          stroke: colour,
          width: 2,
          dash: s.dash,
          alpha: s.faint ? 0.6 : 1,
          fill: s.bars ? `${colour}${s.faint ? '55' : 'cc'}` : undefined,
          paths: s.bars ? uPlot.paths.bars({ size: [s.size, 64], align: s.align }) : undefined,
          points: { show: !s.bars },
          spanGaps: false,
          value: (_u, v) => formatValue(v, s.column),
        };
      }),
    ],
  };
}

const groupKey = (result, row) =>
  result.labelDimensions.map((d) => formatLabel(row[d.name])).join(' · ');

/**
 * The rows by their non-time labels, the largest (by the total of `column`) first: the top
 * TOP_LABELS of them, and the rest as one "other" group when there are more.
 */
function rank(result, column) {
  const byKey = new Map();
  for (const row of result.rows) {
    const key = groupKey(result, row);
    if (!byKey.has(key)) byKey.set(key, { key, rows: [], weight: 0 });
    const group = byKey.get(key);
    group.rows.push(row);
    group.weight += Math.abs(Number(row[column.name]) || 0);
  }
  const ranked = [...byKey.values()].sort((a, b) => b.weight - a.weight);
  if (ranked.length <= TOP_LABELS + 1) return { top: ranked, rest: [] };
  return { top: ranked.slice(0, TOP_LABELS), rest: ranked.slice(TOP_LABELS) };
}

/**
 * Lines over every bucket of the answer (its list, or its period's), not only the buckets
 * that have rows: where a label has no row, a count is 0 and a rate or an average is a gap
 * (the line breaks there, never joins its neighbours).
 */
function timeSeries(result, group) {
  const timeName = result.timeDimension.name;
  const instants = result.rows.some((row) => hasOffset(row[timeName]));
  const x = result.buckets;
  const index = new Map(x.map((v, i) => [v, i]));
  const bucketLabels = new Map(result.rows.map((row) => [bucketKey(row[timeName]), row[timeName]]));
  for (const key of x) {
    if (!bucketLabels.has(key)) {
      bucketLabels.set(key, new Date(key * 1000).toISOString().slice(0, 10));
    }
  }
  const incomplete = x.map(() => false);
  // A bucket is incomplete whatever the label: one row says so for all.
  for (const row of result.rows) {
    const i = index.get(bucketKey(row[timeName]));
    if (i !== undefined && result.isIncomplete(row)) incomplete[i] = true;
  }
  const firstIncomplete = incomplete.indexOf(true);
  if (firstIncomplete !== -1) incomplete.fill(true, firstIncomplete);
  const series = [];
  const notes = [];
  for (const column of group) {
    const metricName = column.name;
    const { top, rest } = rank(result, column);
    const lines = top.map((g) => ({ key: g.key, rows: g.rows }));
    if (rest.length > 0) {
      if (isAdditive(column)) {
        lines.push({
          key: `other (${rest.length} labels)`,
          rows: rest.flatMap((g) => g.rows),
          summing: true,
        });
      } else {
        notes.push(
          `${labelOf(column)}: the ${TOP_LABELS} largest of ${top.length + rest.length} labels`,
        );
      }
    }
    for (const line of lines) {
      const metric = labelOf(column);
      const name = line.key && group.length > 1 ? `${line.key}: ${metric}` : line.key || metric;
      const empty = isCount(column) ? 0 : null;
      const values = new Array(x.length).fill(empty);
      const before = new Array(x.length).fill(result.compared ? empty : null);
      const { summing } = line;
      for (const row of line.rows) {
        const i = index.get(bucketKey(row[timeName]));
        if (i === undefined) continue;
        const value = row[metricName] ?? empty;
        const earlier = row.comparison?.[metricName] ?? empty;
        values[i] = summing && value !== null ? (values[i] ?? 0) + value : value;
        before[i] = summing && earlier !== null ? (before[i] ?? 0) + earlier : earlier;
      }
      const from = series.length;
      pushLine(series, { name, values, before, firstIncomplete, column, result });
      for (const s of series.slice(from)) {
        s.colourKey = line.key || metric;
        s.rank = group.indexOf(column);
      }
    }
  }
  return { time: true, instants, x, bucketLabels, xLabel: axisName(result), series, notes };
}

/** The time axis's name: the bucket, and the zone its dates are in. */
function axisName(result) {
  const dimension = result.timeDimension;
  const name = labelOf(dimension);
  const start =
    dimension.name === 'week'
      ? `, from ${result.weekStart === 'sunday' ? 'Sunday' : 'Monday'}`
      : '';
  return `${name}${start} (${result.timezone})`;
}

function pushLine(series, { name, values, before, firstIncomplete, column, result }) {
  if (firstIncomplete === -1) {
    series.push({ label: name, entry: name, values, full: values, column });
  } else {
    // The incomplete part starts at the last complete point, so the line stays joined.
    const joint = Math.max(0, firstIncomplete - 1);
    series.push({
      label: name,
      entry: name,
      full: values,
      values: values.map((v, i) => (i < firstIncomplete ? v : null)),
      column,
    });
    series.push({
      label: `${name} (incomplete)`,
      entry: name,
      style: 'incomplete',
      values: values.map((v, i) => (i >= joint ? v : null)),
      column,
      dash: [2, 4],
      faint: true,
    });
  }
  if (result.compared) {
    series.push({
      label: `${name}, before`,
      entry: name,
      style: 'before',
      values: before,
      column,
      dash: [8, 5],
      faint: true,
    });
  }
}

function categories(result, [column]) {
  const metricName = column.name;
  const metric = labelOf(column);
  const rows = result.rows.slice(0, 50);
  const labels = rows.map((row) => groupKey(result, row) || metric);
  const x = rows.map((_, i) => i);
  const compared = result.compared;
  const series = [
    {
      label: metric,
      entry: metric,
      values: rows.map((row) => row[metricName]),
      full: rows.map((row) => row[metricName]),
      column,
      bars: true,
      size: compared ? 0.4 : 0.7,
      align: compared ? -1 : 0,
    },
  ];
  if (compared) {
    series.push({
      label: `${metric}, before`,
      entry: metric,
      style: 'before',
      values: rows.map((row) => row.comparison?.[metricName] ?? null),
      column,
      bars: true,
      faint: true,
      size: 0.4,
      align: 1,
    });
  }
  const xLabel = result.labelDimensions.map((d) => labelOf(d)).join(' · ') || 'Total';
  const notes = result.rows.length > 50 ? [`the first 50 of ${result.rows.length} rows`] : [];
  return { time: false, x, labels, xLabel, series, notes };
}
