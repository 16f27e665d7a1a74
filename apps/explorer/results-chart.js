import { formatLabel, formatTick, formatValue, wallClockSeconds } from './format.js';

const MAX_GROUPS = 8;
const HEIGHT = 300;
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const palette = () => [1, 2, 3, 4, 5, 6].map((i) => css(`--series-${i}`));

/**
 * Draws `metric` with uPlot: lines over time when the answer has a time dimension (the
 * comparison dashed on the same axes, incomplete buckets dotted and faint), bars otherwise.
 * Returns the chart, or null when there is nothing to draw. Colours come from the page's CSS,
 * so light and dark schemes both read.
 */
export function drawChart(container, result, metricName) {
  const uPlot = globalThis.uPlot;
  const column = result.metrics.find((m) => m.name === metricName);
  if (!uPlot || !column || result.rows.length === 0) return null;
  const spec = result.timeDimension
    ? timeSeries(result, metricName)
    : categories(result, metricName);
  const colours = palette();
  const fg = css('--fg');
  const grid = css('--line');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const options = {
    width: Math.max(280, container.clientWidth),
    height: HEIGHT,
    // Labels were read as UTC wall-clock times: show them as written.
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
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
        // Counts are ticked at whole numbers only.
        incrs: column.type === 'integer' ? WHOLE_STEPS : undefined,
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
          value: (_u, v) => formatValue(v, column),
        };
      }),
    ],
  };
  container.replaceChildren();
  return new uPlot(options, [spec.x, ...spec.series.map((s) => s.values)], container);
}

const groupKey = (result, row) =>
  result.labelDimensions.map((d) => formatLabel(row[d.name])).join(' · ');

/** Groups rows by their non-time labels, largest first, at most MAX_GROUPS of them. */
function groups(result, metricName) {
  const byKey = new Map();
  for (const row of result.rows) {
    const key = groupKey(result, row);
    if (!byKey.has(key)) byKey.set(key, { key, rows: [], weight: 0 });
    const group = byKey.get(key);
    group.rows.push(row);
    group.weight += Math.abs(Number(row[metricName]) || 0);
  }
  return [...byKey.values()].sort((a, b) => b.weight - a.weight).slice(0, MAX_GROUPS);
}

function timeSeries(result, metricName) {
  const timeName = result.timeDimension.name;
  const x = [...new Set(result.rows.map((row) => wallClockSeconds(row[timeName])))]
    .filter((v) => v !== null)
    .sort((a, b) => a - b);
  const index = new Map(x.map((v, i) => [v, i]));
  const series = [];
  groups(result, metricName).forEach((group, colour) => {
    const name = group.key ? `${group.key}: ${metricName}` : metricName;
    const values = new Array(x.length).fill(null);
    const before = new Array(x.length).fill(null);
    const incomplete = new Array(x.length).fill(false);
    for (const row of group.rows) {
      const i = index.get(wallClockSeconds(row[timeName]));
      if (i === undefined) continue;
      values[i] = row[metricName];
      before[i] = row.comparison?.[metricName] ?? null;
      incomplete[i] = result.isIncomplete(row);
    }
    const firstIncomplete = incomplete.indexOf(true);
    if (firstIncomplete === -1) {
      series.push({ label: name, values, colour });
    } else {
      // The incomplete part starts at the last complete point, so the line stays joined.
      const joint = Math.max(0, firstIncomplete - 1);
      series.push({
        label: name,
        values: values.map((v, i) => (i < firstIncomplete ? v : null)),
        colour,
      });
      series.push({
        label: `${name} (incomplete)`,
        values: values.map((v, i) => (i >= joint ? v : null)),
        colour,
        dash: [2, 4],
        faint: true,
      });
    }
    if (result.compared) {
      series.push({ label: `${name}, before`, values: before, colour, dash: [8, 5], faint: true });
    }
  });
  return { time: true, x, xLabel: timeName, series };
}

function categories(result, metricName) {
  const rows = result.rows.slice(0, 50);
  const labels = rows.map((row) => groupKey(result, row) || metricName);
  const x = rows.map((_, i) => i);
  const compared = result.compared;
  const series = [
    {
      label: metricName,
      values: rows.map((row) => row[metricName]),
      colour: 0,
      bars: true,
      size: compared ? 0.4 : 0.7,
      align: compared ? -1 : 0,
    },
  ];
  if (compared) {
    series.push({
      label: `${metricName}, before`,
      values: rows.map((row) => row.comparison?.[metricName] ?? null),
      colour: 0,
      bars: true,
      faint: true,
      size: 0.4,
      align: 1,
    });
  }
  const xLabel = result.labelDimensions.map((d) => d.name).join(' · ') || 'total';
  return { time: false, x, labels, xLabel, series };
}
