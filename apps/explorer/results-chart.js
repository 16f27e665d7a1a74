import { bucketKey, formatLabel, formatTick, formatValue, hasOffset } from './format.js';

/** Labels drawn one by one; the rest share an "other" series, so the legend stays short. */
export const TOP_LABELS = 5;
const HEIGHT = 300;
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const palette = () => [1, 2, 3, 4, 5, 6].map((i) => css(`--series-${i}`));

/** A count: a label without a row in a bucket counted nothing there, so it is 0, not a gap. */
const isCount = (column) => column.type === 'integer';
/** Counts of tasks or edges add up across labels; distinct people or ratios do not. */
const isAdditive = (column) => isCount(column) && column.unit !== 'people';

/**
 * Draws the metrics named (all of the answer's when `choice` is empty) with uPlot: lines over
 * time when the answer has a time dimension, one chart per unit so that metrics sharing a unit
 * share axes (the comparison dashed, incomplete buckets dotted and faint); bars otherwise, one
 * chart per metric. Returns `{plots, setSize, destroy, notes}`, or null when nothing is drawn.
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
    return new uPlot(
      options(uPlot, container, result, group, spec),
      [spec.x, ...spec.series.map((s) => s.values)],
      target,
    );
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

function options(uPlot, container, result, group, spec) {
  const column = group[0];
  const colours = palette();
  const fg = css('--fg');
  const grid = css('--line');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const timezone = result.metadata.query?.period?.timezone ?? 'Etc/UTC';
  return {
    width: Math.max(280, container.clientWidth),
    height: HEIGHT,
    // Hours are keyed on their instant and shown in the query's zone (both 01:00 of a night the
    // clocks go back); days and longer are wall-clock dates, shown as written.
    tzDate: (seconds) =>
      uPlot.tzDate(new Date(seconds * 1000), spec.instants ? timezone : 'Etc/UTC'),
    scales: {
      x: spec.time ? { time: true } : { time: false, range: [-0.5, spec.labels.length - 0.5] },
      y: { range: (_u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      spec.time
        ? axis
        : {
            ...axis,
            splits: () => spec.labels.map((_, i) => i),
            values: (_u, splits) => splits.map((i) => spec.labels[i] ?? ''),
            rotate: spec.labels.length > 6 ? -30 : 0,
            size: spec.labels.length > 6 ? 80 : 50,
          },
      {
        ...axis,
        size: 60,
        label: group.length > 1 || result.timeDimension ? (column.unit ?? undefined) : undefined,
        // Counts are ticked at whole numbers only.
        incrs: isCount(column) ? WHOLE_STEPS : undefined,
        values: (_u, splits) => splits.map((v) => formatTick(v, column)),
      },
    ],
    legend: { live: true },
    series: [
      { label: spec.xLabel, value: spec.time ? undefined : (_u, i) => spec.labels[i] ?? '' },
      ...spec.series.map((s) => {
        const colour = colours[s.colour % colours.length];
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

function timeSeries(result, group) {
  const timeName = result.timeDimension.name;
  const instants = result.rows.some((row) => hasOffset(row[timeName]));
  const x = [...new Set(result.rows.map((row) => bucketKey(row[timeName])))]
    .filter((v) => v !== null)
    .sort((a, b) => a - b);
  const index = new Map(x.map((v, i) => [v, i]));
  const series = [];
  const notes = [];
  let colour = 0;
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
          `${metricName}: the ${TOP_LABELS} largest of ${top.length + rest.length} labels`,
        );
      }
    }
    for (const line of lines) {
      const name =
        line.key && group.length > 1 ? `${line.key}: ${metricName}` : line.key || metricName;
      const empty = isCount(column) ? 0 : null;
      const values = new Array(x.length).fill(empty);
      const before = new Array(x.length).fill(result.compared ? empty : null);
      const incomplete = new Array(x.length).fill(false);
      const { summing } = line;
      for (const row of line.rows) {
        const i = index.get(bucketKey(row[timeName]));
        if (i === undefined) continue;
        const value = row[metricName] ?? empty;
        const earlier = row.comparison?.[metricName] ?? empty;
        values[i] = summing && value !== null ? (values[i] ?? 0) + value : value;
        before[i] = summing && earlier !== null ? (before[i] ?? 0) + earlier : earlier;
        incomplete[i] = result.isIncomplete(row);
      }
      // A bucket is incomplete whatever the label: one row says so for all.
      for (const row of result.rows) {
        if (result.isIncomplete(row)) {
          const i = index.get(bucketKey(row[timeName]));
          if (i !== undefined) incomplete[i] = true;
        }
      }
      pushLine(series, { name, values, before, incomplete, colour, column, result });
      colour++;
    }
  }
  return { time: true, instants, x, xLabel: timeName, series, notes };
}

function pushLine(series, { name, values, before, incomplete, colour, column, result }) {
  const firstIncomplete = incomplete.indexOf(true);
  if (firstIncomplete === -1) {
    series.push({ label: name, values, colour, column });
  } else {
    // The incomplete part starts at the last complete point, so the line stays joined.
    const joint = Math.max(0, firstIncomplete - 1);
    series.push({
      label: name,
      values: values.map((v, i) => (i < firstIncomplete ? v : null)),
      colour,
      column,
    });
    series.push({
      label: `${name} (incomplete)`,
      values: values.map((v, i) => (i >= joint ? v : null)),
      colour,
      column,
      dash: [2, 4],
      faint: true,
    });
  }
  if (result.compared) {
    series.push({
      label: `${name}, before`,
      values: before,
      colour,
      column,
      dash: [8, 5],
      faint: true,
    });
  }
}

function categories(result, [column]) {
  const metricName = column.name;
  const rows = result.rows.slice(0, 50);
  const labels = rows.map((row) => groupKey(result, row) || metricName);
  const x = rows.map((_, i) => i);
  const compared = result.compared;
  const series = [
    {
      label: metricName,
      values: rows.map((row) => row[metricName]),
      colour: result.metrics.indexOf(column),
      column,
      bars: true,
      size: compared ? 0.4 : 0.7,
      align: compared ? -1 : 0,
    },
  ];
  if (compared) {
    series.push({
      label: `${metricName}, before`,
      values: rows.map((row) => row.comparison?.[metricName] ?? null),
      colour: result.metrics.indexOf(column),
      column,
      bars: true,
      faint: true,
      size: 0.4,
      align: 1,
    });
  }
  const xLabel = result.labelDimensions.map((d) => d.name).join(' · ') || 'total';
  const notes = result.rows.length > 50 ? [`the first 50 of ${result.rows.length} rows`] : [];
  return { time: false, x, labels, xLabel, series, notes };
}
