import { el } from './dom.js';
import { bucketKey, formatBucket } from './format.js';
import { colourSlot } from './results-chart.js';

const HEIGHT = 300;
/** Bottom to top: finished work settles at the bottom, the queue sits on top. */
const STACK = ['completed', 'cancelled', 'in_progress', 'open'];
const WORDS = {
  completed: 'Completed',
  cancelled: 'Cancelled',
  in_progress: 'In progress',
  open: 'Open',
};

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const stackRank = (status) => {
  const at = STACK.indexOf(status);
  return at === -1 ? STACK.length : at;
};
/** A status in words: the four the service knows by name, anything else as it is. */
export const statusWords = (status) => WORDS[status] ?? String(status ?? '(none)');

/**
 * The bands of a cumulative flow diagram from an answer of `tasks_in_status` by a time
 * dimension and `status`: each status's tasks at each bucket's end, closed ones included, so
 * finished work only grows. `{x, statuses, counts}`, where `counts[i][j]` is band i at bucket j
 * (0 where no row), in stacking order.
 */
export function flowSeries(result) {
  const time = result.timeDimension?.name;
  const x = result.buckets;
  const at = new Map(x.map((key, j) => [key, j]));
  const bands = new Map();
  for (const row of result.rows) {
    const j = at.get(bucketKey(row[time]));
    if (j === undefined || !row.tasks_in_status) continue;
    if (!bands.has(row.status))
      bands.set(
        row.status,
        x.map(() => 0),
      );
    bands.get(row.status)[j] = row.tasks_in_status;
  }
  const stacked = [...bands].sort(([a], [b]) => stackRank(a) - stackRank(b));
  const statuses = stacked.map(([s]) => s);
  const counts = stacked.map(([, c]) => c);
  // A bucket without a row still has a name: its wall-clock day.
  const labels = new Map(x.map((key) => [key, new Date(key * 1000).toISOString().slice(0, 10)]));
  for (const row of result.rows) labels.set(bucketKey(row[time]), row[time]);
  return { x, statuses, counts, labels };
}

/**
 * A cumulative flow diagram: each status a band stacked on the ones below it, so a band's
 * thickness is its count and the top edge the whole. Bands are drawn top first, each filled
 * down to the axis, and the next one painted over it.
 */
export function drawFlowChart(container, result) {
  const uPlot = globalThis.uPlot;
  const time = result.timeDimension?.name;
  if (!uPlot || !time || result.rows.length === 0) return null;
  const { x, statuses, counts, labels } = flowSeries(result);
  const stacked = [];
  counts.forEach((row, i) => {
    stacked.push(row.map((count, j) => count + (i > 0 ? stacked[i - 1][j] : 0)));
  });
  const order = statuses.map((_, i) => i).reverse();
  const colourOf = (status) => css(`--series-${colourSlot(status) + 1}`) || css('--fg');
  const fg = css('--fg');
  const grid = css('--line');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  container.replaceChildren();
  const target = el('div', { class: 'plot' });
  container.append(target);
  const plot = new uPlot(
    {
      width: Math.max(280, container.clientWidth),
      height: HEIGHT,
      scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        {
          ...axis,
          label: time,
          values: (_u, splits) =>
            splits.map((v) => formatBucket(labels.get(v) ?? '', time, result.timezone)),
        },
        { ...axis, label: 'tasks', size: 60 },
      ],
      legend: { show: false },
      series: [
        { label: time },
        ...order.map((i) => ({
          label: statusWords(statuses[i]),
          stroke: colourOf(statuses[i]),
          fill: colourOf(statuses[i]),
          width: 1,
          points: { show: false },
        })),
      ],
    },
    [x, ...order.map((i) => stacked[i])],
    target,
  );
  const image = target.querySelector('.u-wrap');
  image?.setAttribute('role', 'img');
  image?.setAttribute(
    'aria-label',
    `Tasks in each status by ${time}, stacked: ${statuses.map(statusWords).join(', ')}; ${x.length} points`,
  );
  const last = x.length - 1;
  target.append(
    el(
      'ul',
      { class: 'legend flow-legend', 'aria-label': 'Statuses, bottom band first' },
      statuses.map((status, i) => {
        // Set through the style object: the page's policy refuses inline style attributes.
        const swatch = el('span', { class: 'swatch', 'aria-hidden': 'true' });
        swatch.style.background = colourOf(status);
        return el(
          'li',
          { 'data-status': status },
          swatch,
          `${statusWords(status)}: ${counts[i][last] ?? 0} at the end`,
        );
      }),
    ),
  );
  container.plots = [plot];
  return {
    series: { x, statuses, counts },
    setSize: (size) => plot.setSize(size),
    destroy: () => {
      plot.destroy();
      container.plots = [];
    },
  };
}
