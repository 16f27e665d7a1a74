import { byId, say } from './dom.js';
import { describeResult } from './result-model.js';
import { drawChart } from './results-chart.js';
import { renderTable } from './results-table.js';

/*
 * The embed page's script: one request, `./answer` beside this page's URL (its `?q=` passed
 * on), on this origin and with no credential but the embed token in the path.
 */

const catalog = JSON.parse(byId('catalog').textContent);
const ui = {
  status: byId('status'),
  chart: byId('chart'),
  canvas: byId('chart-canvas'),
  tableWrap: byId('table-wrap'),
  table: byId('table'),
};
let chart = null;
let result = null;

function redraw() {
  chart?.destroy();
  chart = result ? drawChart(ui.canvas, result, '') : null;
  ui.chart.hidden = chart === null;
}

async function load() {
  const response = await fetch(`${location.pathname}/answer${location.search}`, {
    headers: { Accept: 'application/json' },
    credentials: 'omit',
  });
  const body = await response.json().catch(() => null);
  if (!response.ok || !body) {
    say(ui.status, body?.detail && typeof body.detail === 'string' ? body.detail : 'No answer.');
    document.body.dataset.state = 'failed';
    return;
  }
  result = describeResult(body, catalog);
  const rows = body.metadata?.row_count ?? body.data.length;
  say(ui.status, `${rows} row${rows === 1 ? '' : 's'}.`);
  redraw();
  // No links on labels: an embed shows its view, it opens no other query.
  renderTable(ui.table, result, { caption: document.title });
  ui.tableWrap.hidden = false;
  document.body.dataset.state = 'ready';
}

// uPlot is a classic script with `defer`: it has run before this module does.
load().catch(() => {
  say(ui.status, 'No answer.');
  document.body.dataset.state = 'failed';
});
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redraw);
